/* SPDX-License-Identifier: GPL-2.0-only */
/* view_common.js — what both of memtrack view's pages use (view.js, view_diff.js): units, SVG, colours. */
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";

/* As report prints sizes: below 1 KiB "N B", else one decimal of the largest binary unit. */
function human(bytes) {
	const units = ["KiB", "MiB", "GiB", "TiB", "PiB"];
	if (bytes < 1024)
		return bytes + " B";
	let v = bytes / 1024, u = 0;
	while (v >= 1024 && u < units.length - 1) {
		v /= 1024;
		u++;
	}
	return v.toFixed(1) + " " + units[u];
}
function seconds(ns) {
	return (ns / 1e9).toFixed(3) + " s";
}
/* "S.NNNNNNNNN", as --from and --to take it. */
function secondsExact(ns) {
	return Math.floor(ns / 1e9) + "." + String(ns % 1e9).padStart(9, "0");
}
/* A process's colour, the same in every view and in timeline's SVG (color_of): from its pid alone. */
function pidColour(pid) {
	return "hsl(" + (pid * 137 % 360) + ",65%,42%)";
}
function el(tag, attrs, text) {
	const e = tag.startsWith("svg:") ? document.createElementNS(SVGNS, tag.slice(4)) : document.createElement(tag);
	for (const k in attrs || {})
		e.setAttribute(k, attrs[k]);
	if (text !== undefined)
		e.textContent = text;
	return e;
}
function svgTitle(node, text) {
	node.appendChild(el("svg:title", {}, text));
}


/* A flame graph's zoomed node, names its path from the root (children by name), or the root when it is not there. */
function zoomed(root, names) {
	let node = root;
	for (const name of names) {
		if (!node.children.has(name))
			return { node: root, path: [] };
		node = node.children.get(name);
	}
	return { node: node, path: names.slice() };
}

/*
 * The page's boxes (ids, then the hidden pre "mt-state", where the page writes what it shows for tests), first() drawn
 * once, then the state read from the URL's hash and drawn by update(), again at each change of the hash.
 * click=SELECTOR in the hash (repeatable): clicks on the page's own elements, in order, as a reader would (tests).
 */
function startPage(ids, first, readHash, update) {
	for (const id of ids)
		document.body.appendChild(el("div", { id: id }));
	document.body.appendChild(el("pre", { id: "mt-state", hidden: "" }));
	first();
	const clicks = new URLSearchParams(location.hash.slice(1)).getAll("click");
	readHash();
	update();
	for (const sel of clicks) {
		const target = document.querySelector(sel);
		if (target)
			target.dispatchEvent(new MouseEvent("click", { bubbles: true }));
	}
	window.addEventListener("hashchange", function () {
		readHash();
		update();
	});
}
