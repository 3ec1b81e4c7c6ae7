/* SPDX-License-Identifier: GPL-2.0-only */
/* view_diff.js — memtrack view BEFORE AFTER's page: draws what src/report/view_diff.c embeds (diff's numbers). */
"use strict";

const D = JSON.parse(document.getElementById("mt-data").textContent);
const RUNS = ["before", "after"];
const RUN_COLOUR = { before: "#7b3fb0", after: "#e07000" };
/* The weights a site has in both runs: [index in its [bytes, count, leaked bytes], what it is]. */
const WEIGHTS = {
	bytes: [0, "bytes allocated"],
	count: [1, "allocations"],
	leaked: [2, "bytes leaked"],
};
const SIZES = { after: "sized by after", before: "sized by before", max: "sized by the larger of both" };
const state = { weight: "bytes", size: "after", zoom: [], focus: false };

/* ---- numbers in diff's words ---- */

/* As diff prints a change: "+17600 B (+17.2 KiB)", "-3 B", "+0 B"; a count "+7", "+0". */
function change(d, bytes) {
	const sign = d < 0 ? "-" : "+", n = sign + Math.abs(d);
	if (!bytes)
		return n;
	return n + " B" + (Math.abs(d) >= 1024 ? " (" + sign + human(Math.abs(d)) + ")" : "");
}
function amount(v, bytes) {
	return bytes ? v + " B" + (v >= 1024 ? " (" + human(v) + ")" : "") : String(v);
}

/* ---- the header: both commands, then diff's totals (and report's peak RSS and drops) before, after, change ---- */

/* [label as diff prints it, before, after, bytes]: the rows, diff's first. */
function headerRows() {
	const t = D.diff.totals, rb = D.before.report.totals, ra = D.after.report.totals;
	const rows = [
		["allocations:", t.before.allocations, t.after.allocations, false],
		["allocated:", t.before.bytes, t.after.bytes, true],
		["peak live:", t.before.peak_bytes, t.after.peak_bytes, true],
		["peak RSS:", rb.peak_rss_bytes || 0, ra.peak_rss_bytes || 0, true],
		["leaked blocks:", t.before.leaked_allocations, t.after.leaked_allocations, false],
		["leaked:", t.before.leaked_bytes, t.after.leaked_bytes, true],
	];
	if (t.before.suppressed_allocations || t.after.suppressed_allocations)
		rows.push(["suppressed:", t.before.suppressed_bytes, t.after.suppressed_bytes, true]);
	rows.push(["dropped events:", rb.dropped_events || 0, ra.dropped_events || 0, false]);
	return rows;
}
function drawHeader() {
	const box = document.getElementById("header"), tab = el("table", { id: "diff-totals" });
	box.appendChild(el("h1", {}, "memtrack view: before and after"));
	const head = el("tr");
	for (const h of ["", "before", "after", "change"])
		head.appendChild(el("th", {}, h));
	tab.appendChild(head);
	for (const run of [["command:", "command"], ["artifact:", "dir"]]) {
		const tr = el("tr");
		tr.appendChild(el("td", { class: "k" }, run[0]));
		for (const r of RUNS) {
			const v = run[1] === "dir" ? D[r].dir : (D[r].report.totals.command || []).join(" ");
			const td = el("td", { class: "cmd" }, v);
			td.style.color = RUN_COLOUR[r];
			tr.appendChild(td);
		}
		tr.appendChild(el("td"));
		tab.appendChild(tr);
	}
	for (const row of headerRows()) {
		const tr = el("tr");
		tr.appendChild(el("td", { class: "k" }, row[0]));
		tr.appendChild(el("td", { class: "num" }, amount(row[1], row[3])));
		tr.appendChild(el("td", { class: "num" }, amount(row[2], row[3])));
		tr.appendChild(el("td", { class: "num " + (row[2] > row[1] ? "more" : row[2] < row[1] ? "less" : "") },
				  change(row[2] - row[1], row[3])));
		tab.appendChild(tr);
	}
	box.appendChild(tab);
}

/* ---- both timelines on one axis: time since each run's start, the live heap solid, RSS dashed ---- */

const TL = { width: 1200, height: 220, left: 70, right: 80, top: 10, bottom: 30 };

function runEnd(tl) {
	let end = tl.t_ns.length ? tl.t_ns[tl.t_ns.length - 1] : 0;
	for (const e of tl.events || [])
		end = Math.max(end, e.t_ns);
	return end;
}
/* A series as steps (a value holds until the next sample), scaled to the plot. */
function stepPath(t, v, xOf, yOf) {
	const parts = [];
	let prevY = null;
	t.forEach(function (ns, i) {
		const x = xOf(ns).toFixed(1), y = yOf(v[i]).toFixed(1);
		parts.push((i ? "L" : "M") + x + " " + (prevY === null ? y : prevY), "L" + x + " " + y);
		prevY = y;
	});
	return parts.join(" ");
}
function drawTimeline() {
	const end = Math.max(runEnd(D.before.timeline), runEnd(D.after.timeline), 1);
	const plotH = TL.height - TL.top - TL.bottom, plotW = TL.width - TL.left - TL.right;
	const heapMax = Math.max(D.before.timeline.peak.bytes, D.after.timeline.peak.bytes, 1);
	const rssMax = Math.max.apply(null, RUNS.map(function (r) {
		return D[r].timeline.rss ? D[r].timeline.rss.peak.bytes : 0;
	}).concat([1]));
	const xOf = function (ns) { return TL.left + plotW * ns / end; };
	const yOf = function (max) { return function (v) { return TL.top + plotH - plotH * v / max; }; };
	const svg = el("svg:svg", { width: TL.width, height: TL.height, id: "timeline-svg" });
	svg.appendChild(el("svg:rect", { x: 0, y: 0, width: TL.width, height: TL.height, fill: "#fff" }));
	for (let i = 0; i <= 4; i++) {
		const y = TL.top + plotH - plotH * i / 4;
		svg.appendChild(el("svg:text", { x: 4, y: y + 4, class: "axis" }, human(Math.round(heapMax * i / 4))));
		if (rssMax > 1)
			svg.appendChild(el("svg:text", { x: TL.width - TL.right + 4, y: y + 4, class: "axis rss" },
					   human(Math.round(rssMax * i / 4))));
	}
	const legend = el("div", { class: "legend" });
	for (const r of RUNS) {
		const tl = D[r].timeline;
		const p = el("svg:path", { d: stepPath(tl.t_ns, tl.total, xOf, yOf(heapMax)), stroke: RUN_COLOUR[r],
					   fill: "none", class: "series total heap " + r });
		svgTitle(p, r + " " + D[r].dir + ": live heap, peak " + human(tl.peak.bytes) + " at " + seconds(tl.peak.t_ns));
		svg.appendChild(p);
		if (tl.rss) {
			const q = el("svg:path", { d: stepPath(tl.rss.t_ns, tl.rss.total, xOf, yOf(rssMax)),
						   stroke: RUN_COLOUR[r], fill: "none", class: "series rss " + r });
			svgTitle(q, r + ": RSS, peak " + human(tl.rss.peak.bytes));
			svg.appendChild(q);
		}
		const key = el("span", { class: "key" }, r + ": " + D[r].dir + " (peak live " + human(tl.peak.bytes) +
			       ", " + seconds(runEnd(tl)) + ")");
		key.style.borderColor = RUN_COLOUR[r];
		legend.appendChild(key);
	}
	svg.appendChild(el("svg:text", { x: TL.left, y: TL.height - 6, class: "axis" }, "0 s (each run's start)"));
	svg.appendChild(el("svg:text", { x: TL.width - TL.right - 60, y: TL.height - 6, class: "axis" }, seconds(end)));
	document.getElementById("timeline").replaceChildren(svg, legend);
}

/* ---- the differential flame graph: frames sized by a run, coloured by the change ---- */

function newNode(name, frame) {
	return { name: name, frame: frame, b: [0, 0, 0], a: [0, 0, 0], w: 0, children: new Map() };
}
/* Every matched site along its path: both runs' numbers, and the width the chosen size gives it. */
function buildTree() {
	const root = newNode("all", -1), k = WEIGHTS[state.weight][0];
	for (const s of D.sites) {
		const b = s[1] || [0, 0, 0], a = s[2] || [0, 0, 0];
		const w = state.size === "after" ? a[k] : state.size === "before" ? b[k] : Math.max(a[k], b[k]);
		let node = root;
		const add = function (n) {
			for (let i = 0; i < 3; i++) {
				n.b[i] += b[i];
				n.a[i] += a[i];
			}
			n.w += w;
		};
		add(root);
		for (const f of s[0].length ? s[0] : [-1]) {
			const name = f >= 0 ? D.frames[f][0] : "[no frames]";
			if (!node.children.has(name))
				node.children.set(name, newNode(name, f));
			node = node.children.get(name);
			add(node);
		}
	}
	return root;
}
/* Red for more, blue for less, the deeper the larger the change against the larger of both; grey unchanged. */
function diffColour(node) {
	const k = WEIGHTS[state.weight][0], b = node.b[k], a = node.a[k], d = a - b;
	if (!d)
		return "#dcdcdc";
	const r = Math.abs(d) / Math.max(a, b), light = Math.round(88 - 40 * r);
	return d > 0 ? "hsl(0,85%," + light + "%)" : "hsl(215,85%," + light + "%)";
}
function tooltip(node) {
	const k = WEIGHTS[state.weight][0], bytes = state.weight !== "count", f = node.frame >= 0 ? D.frames[node.frame] : null;
	const b = node.b[k], a = node.a[k];
	let t = node.name + "\n" + WEIGHTS[state.weight][1] + ": " + change(a - b, bytes) +
		(b ? ", " + (a >= b ? "+" : "") + (100 * (a - b) / b).toFixed(1) + "%" : a ? ", new" : "") +
		"\nbefore: " + amount(b, bytes) + "\nafter: " + amount(a, bytes);
	if (state.weight !== "count")
		t += "\nallocations: " + change(node.a[1] - node.b[1], false) + " (" + node.b[1] + " before, " +
		     node.a[1] + " after)";
	if (f && f[1])
		t += "\nsource: " + f[1];
	return t;
}

const FG = { width: 1200, row: 17 };

function sortedChildren(node) {
	return Array.from(node.children.values()).sort(function (x, y) {
		return x.name < y.name ? -1 : x.name > y.name ? 1 : 0;
	});
}
function depthOf(node) {
	let d = 0;
	for (const c of node.children.values())
		d = Math.max(d, depthOf(c));
	return d + 1;
}
function clipText(s, px) {
	const n = Math.floor(px / 7);
	return s.length <= n ? s : s.slice(0, Math.max(n - 2, 0)) + "..";
}
function frameBox(svg, node, x, y, width, fill, onClick) {
	const g = el("svg:g", { class: "fg-frame" });
	g.appendChild(el("svg:rect", { x: x, y: y, width: Math.max(width - 0.5, 0.5), height: FG.row - 1, fill: fill }));
	svgTitle(g, tooltip(node));
	if (width > 30)
		g.appendChild(el("svg:text", { x: x + 3, y: y + FG.row - 5 }, clipText(node.name, width)));
	g.addEventListener("click", onClick);
	svg.appendChild(g);
	return g;
}
function drawNode(svg, node, x, y, scale, path) {
	const wpx = node.w * scale;
	if (wpx < 0.5 || !node.w)
		return;
	frameBox(svg, node, x, y, wpx, diffColour(node), function () {
		state.zoom = path;
		state.focus = false;
		update();
	});
	let cx = x;
	for (const c of sortedChildren(node)) {
		drawNode(svg, c, cx, y - FG.row, scale, path.concat([c.name]));
		cx += c.w * scale;
	}
}
function drawFlame(root) {
	const z = zoomed(root, state.zoom), h = (depthOf(root) + 1) * FG.row + 4;
	const svg = el("svg:svg", { width: FG.width, height: h, viewBox: "0 0 " + FG.width + " " + h });
	let node = root, y = h - FG.row - 2;
	for (let i = 0; i < z.path.length; i++) {	/* the zoomed node's ancestors, full width */
		const upTo = z.path.slice(0, i);
		frameBox(svg, node, 0, y, FG.width, "#e8e8e8", function () {
			state.zoom = upTo;
			state.focus = false;
			update();
		}).classList.add("fg-ancestor");
		node = node.children.get(z.path[i]);
		y -= FG.row;
	}
	drawNode(svg, z.node, 0, y, z.node.w ? FG.width / z.node.w : 0, z.path);
	if (state.focus && z.path.length && z.node.w)	/* the site a table row chose: its own frame outlined */
		svg.querySelector("g.fg-frame:not(.fg-ancestor)").classList.add("fg-focus");
	document.getElementById("flame").replaceChildren(svg);
	return z;
}
/* What the chosen size leaves out: the sites of the weight that only before has (after: their width is 0). */
function onlyBefore() {
	const k = WEIGHTS[state.weight][0];
	return D.sites.filter(function (s) { return s[1] && s[1][k] && !(s[2] && s[2][k]); });
}

/* ---- the sites by their change, in diff's order; a row zooms the flame graph to its frames ---- */

const TABLE_ROWS = 100;
const COLUMNS = [["bytes_delta", "bytes", "b"], ["count_delta", "allocations", "n"],
		 ["leaked_bytes_delta", "leaked", "b"], ["before", "before", ""], ["after", "after", ""],
		 ["site", "site", ""], ["src", "source", ""]];

function siteRow(s) {
	const b = s[1] || [0, 0, 0], a = s[2] || [0, 0, 0], inner = s[0].length ? D.frames[s[0][s[0].length - 1]] : null;
	const side = function (v, has) { return has ? v[0] + " B in " + v[1] : "-"; };
	return {
		bytes_delta: a[0] - b[0], count_delta: a[1] - b[1], leaked_bytes_delta: a[2] - b[2],
		before: side(b, s[1]), after: side(a, s[2]), status: !s[1] ? "new" : !s[2] ? "gone" : "",
		site: inner ? inner[0] : "[no frames]", src: inner && inner[1] ? inner[1] : "",
		frames: s[0].map(function (f) { return D.frames[f][0]; }),
	};
}
function drawTable() {
	const t = el("table", { id: "sites-table" }), head = el("tr");
	for (const c of COLUMNS)
		head.appendChild(el("th", { "data-key": c[0] }, c[1]));
	t.appendChild(head);
	const rows = D.sites.slice(0, TABLE_ROWS).map(siteRow);
	for (const r of rows) {
		const tr = el("tr", { class: "site" + (r.status ? " " + r.status : "") });
		for (const c of COLUMNS) {
			const v = c[2] ? change(r[c[0]], c[2] === "b") : r[c[0]] + (c[0] === "after" && r.status ? " (" +
				  r.status + ")" : "");
			tr.appendChild(el("td", { class: c[2] ? "num " + (r[c[0]] > 0 ? "more" : r[c[0]] < 0 ? "less" : "")
						  : "" }, v));
		}
		tr.title = r.frames.slice().reverse().join("\n");
		tr.addEventListener("click", function () {
			state.zoom = r.frames.length ? r.frames : ["[no frames]"];
			state.focus = true;
			if (r.status === "gone" && state.size === "after")
				state.size = "max";	/* its frames have no width in after */
			update();
			document.getElementById("flame").scrollIntoView();
		});
		t.appendChild(tr);
	}
	const note = el("div", { class: "note" }, D.diff.sites_total + " sites, matched by their functions as " +
			"memtrack diff matches them" + (D.sites.length > rows.length ? "; the first " + rows.length + " shown" : "") +
			"; click a site for its frames in the flame graph");
	document.getElementById("sites").replaceChildren(el("h2", {}, "sites by change in bytes"), note, t);
	return rows;
}

/* ---- controls, the hash, and the state the page is in, for its reader and for tests ---- */

function readHash() {
	const h = new URLSearchParams(location.hash.slice(1));
	if (WEIGHTS[h.get("weight")])
		state.weight = h.get("weight");
	if (SIZES[h.get("size")])
		state.size = h.get("size");
	state.zoom = h.has("zoom") ? h.get("zoom").split(";") : [];
	state.focus = h.get("focus") === "1" && state.zoom.length > 0;
}
function writeHash() {
	const h = new URLSearchParams();
	h.set("weight", state.weight);
	h.set("size", state.size);
	if (state.zoom.length)
		h.set("zoom", state.zoom.join(";"));
	if (state.focus)
		h.set("focus", "1");
	history.replaceState(null, "", "#" + h.toString());
}
function select(id, options, key) {
	const sel = el("select", { id: id });
	for (const k in options)
		sel.appendChild(el("option", { value: k }, Array.isArray(options[k]) ? options[k][1] : options[k]));
	sel.addEventListener("change", function () {
		state[key] = sel.value;
		state.zoom = [];
		update();
	});
	return sel;
}
function drawControls() {
	const reset = el("button", { id: "reset" }, "reset zoom");
	reset.addEventListener("click", function () {
		state.zoom = [];
		state.focus = false;
		update();
	});
	const legend = el("span", { class: "note" }, "red: more in after, blue: less, grey: unchanged");
	document.getElementById("controls").replaceChildren(select("weight", WEIGHTS, "weight"),
		select("size", SIZES, "size"), reset, legend, el("div", { id: "status" }));
}
function nodeState(node) {
	const k = WEIGHTS[state.weight][0];
	return { name: node.name, before: node.b, after: node.a, delta: node.a[k] - node.b[k], width: node.w,
		 title: tooltip(node) };
}
function update() {
	state.focus = state.focus && state.zoom.length > 0;
	writeHash();
	document.getElementById("weight").value = state.weight;
	document.getElementById("size").value = state.size;
	const root = buildTree(), z = drawFlame(root), rows = drawTable(), gone = onlyBefore(), k = WEIGHTS[state.weight][0];
	const goneW = gone.reduce(function (sum, s) { return sum + s[1][k]; }, 0);
	document.getElementById("status").textContent = WEIGHTS[state.weight][1] + ", " + SIZES[state.size] + ": " +
		change(root.a[k] - root.b[k], state.weight !== "count") + " in all" + (gone.length ? "; " + gone.length +
		" sites only in before (" + amount(goneW, state.weight !== "count") + ")" +
		(state.size === "after" ? ", shown when sized by before or the larger" : "") : "");
	document.getElementById("mt-state").textContent = JSON.stringify({
		weight: state.weight, size: state.size, zoom: z.path, focus: state.focus,
		header: headerRows().map(function (r) { return [r[0], r[1], r[2], r[2] - r[1]]; }),
		commands: RUNS.map(function (r) { return D[r].report.totals.command || []; }),
		timelines: RUNS.map(function (r) { return document.querySelectorAll("#timeline-svg .heap." + r).length; }),
		root: nodeState(root), shown: nodeState(z.node), only_before: gone.length,
		frames_drawn: document.querySelectorAll("#flame g.fg-frame").length,
		sites_total: D.diff.sites_total,
		table: rows.slice(0, 20).map(function (r) {
			return [r.frames[r.frames.length - 1] || "", r.bytes_delta, r.count_delta, r.leaked_bytes_delta,
				r.status];
		}),
	});
}

startPage(["header", "timeline", "controls", "flame", "sites"], function () {
	drawHeader();
	drawTimeline();
	drawControls();
}, readHash, update);
