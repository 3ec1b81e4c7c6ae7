/* SPDX-License-Identifier: GPL-2.0-only */
/* view.js — memtrack view's page: draws the data src/report/view.c embeds; no network, no library. */
"use strict";

const D = JSON.parse(document.getElementById("mt-data").textContent);
const EDGES = D.edges;
const LAST = EDGES.length - 1;
const WEIGHTS = {
	bytes: "bytes allocated in the window",
	count: "allocations in the window",
	live: "bytes live at the instant",
	peak: "bytes live at the peak",
	leaked: "bytes leaked",
};

/* ---- state: the window, the instant, the weight, search, zoom, inverted; mirrored in location.hash ---- */

const state = { weight: "peak", from: 0, to: LAST, at: -1, search: "", zoom: [], invert: false, hide: false,
		focus: false, roots: "one" };

/* The edge at or before ns (up: at or after). */
function edgeOf(ns, up) {
	let i = 0;
	while (i < LAST && EDGES[i + 1] <= ns)
		i++;
	if (up && EDGES[i] < ns && i < LAST)
		i++;
	return i;
}
function readHash() {
	const h = new URLSearchParams(location.hash.slice(1));
	if (h.has("from") || h.has("to")) {
		state.from = edgeOf(Number(h.get("from") || 0), false);
		state.to = h.has("to") ? edgeOf(Number(h.get("to")), true) : LAST;
		state.weight = "bytes";
	}
	if (h.has("at") && h.get("at") !== "peak") {
		state.at = edgeOf(Number(h.get("at")), true);
		state.weight = "live";
	}
	if (h.has("weight") && WEIGHTS[h.get("weight")])
		state.weight = h.get("weight");
	state.search = h.get("search") || "";
	state.zoom = h.has("zoom") ? h.get("zoom").split(";") : [];
	state.invert = h.get("invert") === "1";
	state.hide = h.get("hide") === "1";
	state.focus = h.get("focus") === "1" && state.zoom.length > 0;
	state.roots = ["exe", "proc"].includes(h.get("roots")) ? h.get("roots") : "one";
	if (["sites", "leaks", "exes", "procs"].includes(h.get("table")))
		table.name = h.get("table");
	table.key = h.get("sort");
	table.desc = h.get("asc") !== "1";
}
function writeHash() {
	const h = new URLSearchParams();
	h.set("weight", state.weight);
	if (state.from > 0 || state.to < LAST) {
		h.set("from", EDGES[state.from]);
		h.set("to", EDGES[state.to]);
	}
	if (state.at >= 0)
		h.set("at", EDGES[state.at]);
	if (state.search)
		h.set("search", state.search);
	if (state.zoom.length)
		h.set("zoom", state.zoom.join(";"));
	if (state.invert)
		h.set("invert", "1");
	if (state.hide)
		h.set("hide", "1");
	if (state.focus)
		h.set("focus", "1");
	if (state.roots !== "one")
		h.set("roots", state.roots);
	if (table.name !== "sites")
		h.set("table", table.name);
	if (table.key)
		h.set("sort", table.key);
	if (!table.desc)
		h.set("asc", "1");
	history.replaceState(null, "", "#" + h.toString());
}

/* ---- weights by stack, from the steps (changes at each edge) ---- */

/* {w: the chosen weight, count: allocations in the window} by stack index. */
/* The same over steps (quintuples edge, index, allocations, bytes, live bytes) of n indexes; whole(i): index i's
 * whole-run weight, for peak and leaked. */
function weightsOf(steps, n, whole) {
	const w = new Float64Array(n), count = new Float64Array(n);
	if (state.weight === "peak" || state.weight === "leaked")
		for (let i = 0; i < n; i++)
			w[i] = whole(i);
	for (let k = 0; k < steps.length; k += 5) {
		const edge = steps[k], st = steps[k + 1];
		if (edge > state.from && edge <= state.to)
			count[st] += steps[k + 2];
		if (state.weight === "bytes" && edge > state.from && edge <= state.to)
			w[st] += steps[k + 3];
		else if (state.weight === "live" && edge <= state.at)
			w[st] += steps[k + 4];
	}
	if (state.weight === "count")
		w.set(count);
	return { w: w, count: count };
}
function stackWeights() {
	const src = state.weight === "peak" ? D.stack_peak : D.stack_leaked;
	const sw = weightsOf(D.steps, D.stacks.length, function (i) { return src[i]; });
	if (!D.cells)
		return sw;
	/* a tree's page has no "steps": the cells add up to them (processes' parts of each stack) */
	const cw = cellWeights(), whole = state.weight === "peak" || state.weight === "leaked";
	for (let i = 0; i < cw.w.length; i++) {
		const stack = D.cells[4 * i + 1];
		sw.count[stack] += cw.count[i];
		if (!whole)
			sw.w[stack] += cw.w[i];
	}
	return sw;
}

/* ---- the flame graph ---- */

function newNode(name, frame) {
	return { name: name, frame: frame, w: 0, count: 0, children: new Map() };
}
/* The dynamic loader's frames, and those outside main (_start, __libc_start_main...): the runtime's, not the
 * program's; a path without main keeps its frames but the loader's. */
const LOADER = /(^|\/)ld(-linux[^/]*)?\.so/;
function runtimeHidden(path) {
	const kept = path.filter(function (f) { return !LOADER.test(D.frames[f][2] || ""); });
	const m = kept.findIndex(function (f) { return D.frames[f][0] === "main"; });
	return kept.length ? kept.slice(Math.max(m, 0)) : path;
}
/* Adds weight w and count n along path (frame indices) under node, after the given root names (none: none). */
function addPath(root, heads, path, w, n) {
	const shown = state.hide ? runtimeHidden(path) : path;
	let node = root;
	root.w += w;
	root.count += n;
	for (const h of heads) {
		if (!node.children.has(h.name))
			node.children.set(h.name, Object.assign(newNode(h.name, -2), { colour: h.colour, title: h.title }));
		node = node.children.get(h.name);
		node.w += w;
		node.count += n;
	}
	for (const f of state.invert ? shown.slice().reverse() : shown) {
		const name = D.frames[f][0];
		if (!node.children.has(name))
			node.children.set(name, newNode(name, f));
		node = node.children.get(name);
		node.w += w;
		node.count += n;
	}
}
function baseName(path) {
	return String(path).split("/").pop();
}
/* The flame graph's root for process i of D.procs (or the only one): per process or per executable. */
function procHead(i) {
	const p = D.procs ? D.procs[i] : [D.report.processes[0].pid, D.report.processes[0].exe];
	if (state.roots === "exe")
		return { name: baseName(p[1]), colour: "#b0b8c8", title: p[1] };
	return { name: p[0] + " " + baseName(p[1]), colour: pidColour(p[0]), title: "pid " + p[0] + " " + p[1] };
}
/* By cell of D.cells (a process's part of a stack): the weight and the allocations in the window. */
function cellWeights() {
	return weightsOf(D.cell_steps, D.cells.length / 4, function (i) {
		const stack = D.cells[4 * i + 1];
		return state.weight === "peak" ? D.cells[4 * i + 2] : D.stack_leaked[stack] ? D.cells[4 * i + 3] : 0;
	});
}
function buildTree(sw) {
	const root = newNode("all", -1);
	if (state.roots !== "one" && D.cells) {
		const cw = cellWeights();
		for (let i = 0; i < cw.w.length; i++)
			if (cw.w[i] || cw.count[i])
				addPath(root, [procHead(D.cells[4 * i])], D.stacks[D.cells[4 * i + 1]], cw.w[i], cw.count[i]);
		return root;
	}
	const heads = state.roots === "one" ? [] : [procHead(0)];
	D.stacks.forEach(function (path, i) {
		if (sw.w[i] || sw.count[i])
			addPath(root, heads, path, sw.w[i], sw.count[i]);
	});
	return root;
}
function searchRe() {
	try {
		return state.search ? new RegExp(state.search) : null;
	} catch (e) {
		return null;
	}
}
/* The weight of the outermost nodes whose name matches: what the search covers, counted once. */
function matched(node, re) {
	if (node.frame >= 0 && re.test(node.name))
		return node.w;
	let sum = 0;
	for (const c of node.children.values())
		sum += matched(c, re);
	return sum;
}
function fmtWeight(v) {
	return state.weight === "count" ? v + " allocations" : human(v) + " (" + v + " B)";
}
function tooltip(node, total) {
	const f = node.frame >= 0 ? D.frames[node.frame] : null;
	let t = (node.title || node.name) + "\n" + fmtWeight(node.w) + ", " + (total ? (100 * node.w / total).toFixed(2) : "0.00") + "%";
	if (state.weight === "bytes" || state.weight === "count")
		t += "\n" + node.count + " allocations";
	if (f && f[2])
		t += "\nmodule: " + f[2];
	if (f && f[1])
		t += "\nsource: " + f[1];
	return t;
}

const FG = { width: 1200, row: 17 };

function drawNode(svg, node, x, y, scale, total, re, path) {
	const wpx = node.w * scale;
	if (wpx < 0.5 || !node.w)
		return;
	const g = el("svg:g", { class: "fg-frame" });
	const hit = re && node.frame >= 0 && re.test(node.name);
	const r = el("svg:rect", { x: x, y: y, width: Math.max(wpx - 0.5, 0.5), height: FG.row - 1,
				    fill: hit ? "#e040e0" : frameColour(node) });
	g.appendChild(r);
	svgTitle(g, tooltip(node, total));
	if (wpx > 30)
		g.appendChild(el("svg:text", { x: x + 3, y: y + FG.row - 5 }, clip(node.name, wpx)));
	g.addEventListener("click", function () {
		state.zoom = path;
		state.focus = false;
		update();
	});
	svg.appendChild(g);
	let cx = x;
	for (const c of sortedChildren(node)) {
		drawNode(svg, c, cx, state.invert ? y + FG.row : y - FG.row, scale, total, re, path.concat([c.name]));
		cx += c.w * scale;
	}
}
function sortedChildren(node) {
	return Array.from(node.children.values()).sort(function (a, b) {
		return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
	});
}
function frameColour(node) {
	if (node.colour)
		return node.colour;
	const f = node.frame >= 0 ? D.frames[node.frame] : null;
	if (!f)
		return "#c0c0c0";
	let h = 0;
	for (const ch of f[2] || "")
		h = (h * 31 + ch.charCodeAt(0)) >>> 0;
	return "hsl(" + (10 + h % 50) + ",80%," + (55 + h % 15) + "%)";
}
function clip(s, px) {
	const n = Math.floor(px / 7);
	return s.length <= n ? s : s.slice(0, Math.max(n - 2, 0)) + "..";
}
function depthOf(node) {
	let d = 0;
	for (const c of node.children.values())
		d = Math.max(d, depthOf(c));
	return d + 1;
}
function drawFlame(root) {
	const box = document.getElementById("flame");
	const z = zoomed(root, state.zoom), depth = depthOf(root) + 1, re = searchRe();
	const h = depth * FG.row + 4;
	const svg = el("svg:svg", { width: FG.width, height: h, viewBox: "0 0 " + FG.width + " " + h });
	const scale = z.node.w ? FG.width / z.node.w : 0;
	/* the zoomed node's ancestors full width, then it and its descendants to scale */
	let node = root, y = state.invert ? 0 : h - FG.row - 2;
	const step = state.invert ? FG.row : -FG.row;
	for (let i = 0; i < z.path.length; i++) {
		const anc = el("svg:g", { class: "fg-frame fg-ancestor" });
		anc.appendChild(el("svg:rect", { x: 0, y: y, width: FG.width, height: FG.row - 1, fill: "#e8e8e8" }));
		anc.appendChild(el("svg:text", { x: 3, y: y + FG.row - 5 }, clip(node.name, FG.width)));
		svgTitle(anc, tooltip(node, root.w));
		const upTo = z.path.slice(0, i);
		anc.addEventListener("click", function () {
			state.zoom = upTo;
			state.focus = false;
			update();
		});
		svg.appendChild(anc);
		node = node.children.get(z.path[i]);
		y += step;
	}
	drawNode(svg, z.node, 0, y, scale, root.w, re, z.path);
	if (state.focus && z.path.length && z.node.w)	/* the site a table row chose: its own frame outlined */
		svg.querySelector("g.fg-frame:not(.fg-ancestor)").classList.add("fg-focus");
	box.replaceChildren(svg);
	return { shown: z.node.w, matched: re ? matched(z.node, re) : 0, zoomName: z.node.name };
}

/* ---- the tables: sites, leaks by site, executables, processes; sortable, a site row zooms the flame graph ---- */

/* Which table, its sort column (null: the weight's) and order; mirrored in the hash (table=, sort=, asc=1). */
const table = { name: "sites", key: null, desc: true };
const TABLE_ROWS = 100;

/* The stacks merged by their frames (name, source line, module), with every per-site number the page has. */
function siteRows(sw) {
	const rows = new Map(), live = state.weight === "live";
	D.stacks.forEach(function (path, i) {
		const temp = D.stack_temporary_allocations[i];
		if (!sw.w[i] && !sw.count[i] && !D.stack_leaked[i] && !D.stack_peak[i] && !temp)
			return;
		const key = path.join(",");
		if (!rows.has(key)) {
			const inner = D.frames[path[path.length - 1]];
			rows.set(key, { site: inner[0], src: inner[1] || "", module: inner[2] || "", path: path,
					bytes: 0, count: 0, live: 0, peak: 0, temporary: 0, temporary_bytes: 0,
					leaked: 0, leaked_allocations: 0 });
		}
		const r = rows.get(key);
		r.count += sw.count[i];
		if (state.weight === "bytes")
			r.bytes += sw.w[i];
		if (live)
			r.live += sw.w[i];
		r.peak += D.stack_peak[i];
		r.temporary += temp;
		r.temporary_bytes += D.stack_temporary_bytes[i];
		r.leaked += D.stack_leaked[i];
		r.leaked_allocations += D.stack_leaked_allocations[i];
	});
	return Array.from(rows.values());
}
/* A table's columns: [key, heading, kind] (kind: "b" bytes, "n" a count, "" text). */
function tableColumns(name) {
	const site = [["site", "site", ""], ["src", "source", ""], ["module", "module", ""]];
	const win = state.weight === "bytes" || state.weight === "count";
	if (name === "sites")
		return site.concat(win ? [["bytes", "bytes in the window", "b"]] : [],
				   state.weight === "live" ? [["live", "live at the instant", "b"]] : [],
				   [["count", "allocations in the window", "n"], ["peak", "live at the peak", "b"],
				    ["temporary", "temporary", "n"], ["temporary_bytes", "temporary bytes", "b"],
				    ["leaked", "leaked", "b"]]);
	if (name === "leaks")
		return site.concat([["leaked", "leaked", "b"], ["leaked_allocations", "leaked blocks", "n"],
				    ["count", "allocations in the window", "n"]]);
	const common = [["allocations", "allocations", "n"], ["allocated_bytes", "allocated", "b"],
			["frees", "frees", "n"], ["peak_live_bytes", "peak live", "b"], ["leaked_bytes", "leaked", "b"]];
	if (name === "exes")
		return [["exe", "executable", ""], ["processes", "processes", "n"], ["images", "images", "n"]]
			.concat(common, [["peak_rss_bytes", "peak RSS", "b"]]);
	return [["pid", "pid", "n"], ["ppid", "ppid", "n"], ["image", "image", "n"], ["exe", "executable", ""],
		["ended_by", "ended by", ""]].concat(common);
}
/* The column a table sorts by when none was clicked: the weight's, for the sites. */
function tableKey(name) {
	if (table.key && tableColumns(name).some(function (c) { return c[0] === table.key; }))
		return table.key;
	if (name === "sites")
		return { bytes: "bytes", count: "count", live: "live", peak: "peak", leaked: "leaked" }[state.weight];
	return name === "leaks" ? "leaked" : name === "exes" ? "allocated_bytes" : "allocations";
}
function tableRows(name, sw) {
	if (name === "exes")
		return (D.report.executables || []).slice();
	if (name === "procs")
		return D.report.processes.slice();
	const rows = siteRows(sw);
	return name === "leaks" ? rows.filter(function (r) { return r.leaked_allocations > 0; }) : rows;
}
function compareBy(key, desc) {
	return function (a, b) {
		const x = a[key], y = b[key];
		const c = x < y ? -1 : x > y ? 1 : 0;
		return desc ? -c : c;
	};
}
function cellText(v, kind) {
	if (kind === "b")
		return human(v);
	return Array.isArray(v) ? v.join(" ") : String(v === null || v === undefined ? "" : v);
}
/* A site row's frames in the flame graph: the weight made one it has, zoomed to its path as the tree has it. */
function siteFocus(r) {
	const has = { bytes: r.bytes, count: r.count, live: r.live, peak: r.peak, leaked: r.leaked };
	if (table.name === "leaks")
		state.weight = "leaked";
	else if (!has[state.weight]) {
		const w = table.name === "leaks" || !r.count && !r.peak ? "leaked" : r.peak ? "peak" : "bytes";
		if (w === "bytes")
			Object.assign(state, { from: 0, to: LAST });
		state.weight = w;
	}
	const shown = state.hide ? runtimeHidden(r.path) : r.path;
	const p = state.invert ? shown.slice().reverse() : shown;
	state.roots = "one";	/* a site's row adds up every process's part */
	state.zoom = p.map(function (f) { return D.frames[f][0]; });
	state.focus = true;
	update();
	document.getElementById("flame").scrollIntoView();
}
/* A process's or an executable's row: the flame graph with a root for each, zoomed to the row's. */
function rootFocus(name, r) {
	state.roots = name === "exes" ? "exe" : "proc";
	let i = 0;
	for (let k = 0; D.procs && k < D.procs.length; k++)
		if (name === "procs" ? D.procs[k][0] === r.pid : D.procs[k][1] === r.exe)
			i = k;
	state.zoom = [procHead(i).name];
	state.focus = true;
	update();
	document.getElementById("flame").scrollIntoView();
}
function drawTableHead(t, cols, key, sw) {
	const head = el("tr");
	for (const c of cols) {
		const th = el("th", { "data-key": c[0] }, c[1] + (key === c[0] ? (table.desc ? " ▼" : " ▲") : ""));
		th.addEventListener("click", function () {
			table.desc = key === c[0] ? !table.desc : true;
			table.key = c[0];
			writeHash();
			drawTable(sw);
		});
		head.appendChild(th);
	}
	t.appendChild(head);
}
/* Draws the chosen table; returns its rows as the state shows them (the first ones, raw values). */
function drawTable(sw) {
	const name = table.name, cols = tableColumns(name), key = tableKey(name);
	const all = tableRows(name, sw).sort(compareBy(key, table.desc));
	const rows = all.slice(0, TABLE_ROWS);
	const t = el("table", { id: "sites-table", "data-table": name });
	drawTableHead(t, cols, key, sw);
	for (const r of rows) {
		const tr = el("tr");
		for (const c of cols)
			tr.appendChild(el("td", { class: c[2] ? "num" : "" }, cellText(r[c[0]], c[2])));
		if (r.path) {
			tr.title = r.path.map(function (f) { return D.frames[f][0]; }).reverse().join("\n");
			tr.classList.add("site");
			tr.addEventListener("click", function () { siteFocus(r); });
		} else {
			tr.title = (r.cmdline || [r.exe]).join(" ");
			tr.classList.add("site");
			tr.addEventListener("click", function () { rootFocus(name, r); });
		}
		t.appendChild(tr);
	}
	const tabs = el("div", { id: "tables-tabs" });
	for (const n of [["sites", "top sites"], ["leaks", "leaks by site"], ["exes", "executables"],
			 ["procs", "processes"]]) {
		const b = el("button", { id: "tab-" + n[0], class: n[0] === name ? "tab on" : "tab" }, n[1]);
		b.addEventListener("click", function () {
			Object.assign(table, { name: n[0], key: null, desc: true });
			writeHash();
			drawTable(sw);
		});
		tabs.appendChild(b);
	}
	const note = el("div", { class: "note" }, all.length + " rows" + (all.length > rows.length ? ", the first " +
			rows.length + " shown" : "") + (name === "sites" || name === "leaks" ?
			"; click a site for its frames in the flame graph" : ""));
	document.getElementById("sites").replaceChildren(tabs, note, t);
	table.shown = { table: name, sort: key, desc: table.desc, rows: all.length, columns: cols.map(function (c) {
		return c[0]; }), first: rows.slice(0, 20).map(function (r) {
		return cols.map(function (c) { return r[c[0]]; }); }) };
	const st = document.getElementById("mt-state");
	if (st.textContent)
		st.textContent = JSON.stringify(Object.assign(JSON.parse(st.textContent), { table: table.shown }));
}

/* ---- the header: report's numbers, report's words ---- */

function drawHeader() {
	const t = D.report.totals, box = document.getElementById("header");
	const line = function (label, value) {
		const p = el("div", { class: "kv" });
		p.appendChild(el("span", { class: "k" }, label));
		p.appendChild(el("span", { class: "v" }, value));
		box.appendChild(p);
	};
	box.appendChild(el("h1", {}, "memtrack: " + (t.command || []).join(" ")));
	line("artifact", D.dir + (t.complete ? "" : " (the recording did not finish)"));
	if (D.report.labels)	/* record --label */
		line("labels", Object.keys(D.report.labels).map(function (k) {
			return k + "=" + D.report.labels[k];
		}).join(" "));
	line("processes", t.processes + " (" + t.images + " images)");
	line("allocations", t.allocations + ", " + human(t.allocated_bytes) + " (" + t.allocated_bytes + " B)");
	line("frees", t.frees + ", " + human(t.freed_bytes) + " (" + t.freed_bytes + " B)");
	line("peak live", human(t.peak_live_bytes) + " (" + t.peak_live_bytes + " B) at " + seconds(t.peak_ts_ns));
	if (t.rss_records)
		line("peak RSS", human(t.peak_rss_bytes) + " (" + t.peak_rss_bytes + " B) at " + seconds(t.peak_rss_ts_ns));
	if (t.rss_at_peak)	/* report's "Where RSS goes at its peak": terms that add up to it, the rest maybe < 0 */
		line("where it goes", [["heap_bytes", "live heap"], ["allocator_held_bytes", "allocator-held"],
				       ["program_mapped_bytes", "program mappings"], ["file_bytes", "file"],
				       ["shmem_bytes", "shmem"], ["rest_bytes", "the rest"]].map(function (k) {
			const v = t.rss_at_peak[k[0]];
			return k[1] + " " + (v < 0 ? "-" + human(-v) : human(v));
		}).join(", "));
	line("leaked", t.leaked_allocations + " blocks, " + human(t.leaked_bytes) + " (" + t.leaked_bytes + " B)" +
	     (t.suppressed_allocations ? "; suppressed " + t.suppressed_allocations + " blocks, " +
	      human(t.suppressed_bytes) : ""));
	const warn = [];
	if (t.dropped_events)
		warn.push("dropped events: " + t.dropped_events + " (" + Object.keys(t.drops).filter(function (k) {
			return t.drops[k];
		}).map(function (k) { return k + " " + t.drops[k]; }).join(", ") + ")");
	if (t.stacks_withheld)
		warn.push("stacks withheld: " + t.stacks_withheld);
	if (t.late_records)
		warn.push("late records: " + t.late_records);
	if (t.bad_records)
		warn.push("bad records: " + t.bad_records);
	for (const w of warn)
		box.appendChild(el("div", { class: "warn" }, w));
	const det = el("details");
	det.appendChild(el("summary", {}, "memtrack report " + D.dir));
	det.appendChild(el("pre", { id: "report-text" }, D.report_text));
	box.appendChild(det);
}

/* ---- the timeline: live heap per process and in total, RSS on its own axis; drag a window, click an instant ---- */

const TL = { width: 1200, height: 240, left: 70, right: 80, top: 10, bottom: 40 };

function tlX(ns) {
	return TL.left + (TL.width - TL.left - TL.right) * ns / Math.max(EDGES[LAST], 1);
}
function tlNs(x) {
	return Math.max(0, (x - TL.left) / (TL.width - TL.left - TL.right) * EDGES[LAST]);
}
function polyline(t, v, max, colour, cls, label) {
	const h = TL.height - TL.top - TL.bottom;
	let d = "";
	for (let i = 0; i < t.length; i++) {
		const x = tlX(t[i]).toFixed(1), y = (TL.top + h - h * v[i] / Math.max(max, 1)).toFixed(1);
		d += (i ? " L" : "M") + x + " " + (i ? (TL.top + h - h * v[i - 1] / Math.max(max, 1)).toFixed(1) : y) +
		     " L" + x + " " + y;	/* steps: a value holds until the next sample */
	}
	const p = el("svg:path", { d: d, stroke: colour, fill: "none", class: cls });
	svgTitle(p, label);
	return p;
}
function axisLabels(svg, max, right) {
	const h = TL.height - TL.top - TL.bottom;
	for (let i = 0; i <= 4; i++) {
		const y = TL.top + h - h * i / 4;
		svg.appendChild(el("svg:text", { x: right ? TL.width - TL.right + 4 : 4, y: y + 4,
						  class: right ? "axis rss" : "axis" }, human(Math.round(max * i / 4))));
	}
}
/* As report: above this many process images (MT_EXES_AUTO_ROWS), a line per executable, not per process. */
const GROUP_ROWS = 12;
let groupsMemo;

/* A big tree's executables: each one's line from the timeline (its processes' live bytes while they ran it, at the
 * timeline's points, as the processes' own lines); by peak, largest first. null for a smaller tree. */
function exeGroups() {
	if (groupsMemo !== undefined)
		return groupsMemo;
	groupsMemo = null;
	if (!D.timeline.executables || D.report.processes.length <= GROUP_ROWS)
		return null;
	groupsMemo = D.timeline.executables.map(function (x) {
		return { exe: x.exe, procs: x.processes, live: x.live_bytes, peak: x.peak_bytes };
	}).filter(function (g) { return g.peak > 0; }).sort(compareBy("peak", true));
	return groupsMemo;
}
function exeColour(exe) {
	let h = 0;
	for (const ch of exe)
		h = (h * 31 + ch.charCodeAt(0)) >>> 0;
	return "hsl(" + (h % 360) + ",60%,40%)";
}
function drawTimelineSeries(svg) {
	const tl = D.timeline, groups = exeGroups();
	const max = tl.peak ? tl.peak.bytes : Math.max.apply(null, tl.total.concat([1]));
	axisLabels(svg, max, false);
	for (const g of groups || [])
		svg.appendChild(polyline(tl.t_ns, g.live, max, exeColour(g.exe), "series exe", g.exe + ": " + g.procs +
					 " processes, peak " + human(g.peak)));
	for (const p of groups ? [] : tl.processes)
		svg.appendChild(polyline(tl.t_ns, p.live_bytes, max, pidColour(p.pid), "series",
					 p.pid + " " + p.exe + ": peak " + human(p.peak_bytes)));
	if (tl.others && !groups)
		svg.appendChild(polyline(tl.t_ns, tl.others, max, "#999", "series", "other processes"));
	svg.appendChild(polyline(tl.t_ns, tl.total, max, "#000", "series total", "total live heap"));
	/* RSS and the anonymous mappings (program + allocator) share the right axis: both are bytes of the process */
	const side = Math.max(tl.rss ? tl.rss.peak.bytes : 0, tl.mapped ? tl.mapped.peak.bytes : 0);
	if (tl.rss || tl.mapped)
		axisLabels(svg, side, true);
	if (tl.mapped)
		svg.appendChild(polyline(tl.mapped.t_ns, tl.mapped.total, side, "#208040", "series mapped",
					 "total mapped (anonymous private, program + allocator): peak " +
					 human(tl.mapped.peak.bytes)));
	if (tl.rss)
		svg.appendChild(polyline(tl.rss.t_ns, tl.rss.total, side, "#2060c0", "series rss",
					 "total RSS: peak " + human(tl.rss.peak.bytes)));
	const px = tlX(D.report.totals.peak_ts_ns);
	const peak = el("svg:circle", { cx: px, cy: TL.top, r: 4, class: "peak" });
	svgTitle(peak, "peak live " + human(D.report.totals.peak_live_bytes) + " at " + seconds(D.report.totals.peak_ts_ns));
	svg.appendChild(peak);
}
/* The control FIFO's lines: paused spans (a stop to the next start, or the end) shaded, labels as dashed lines. */
function drawTimelineControl(svg) {
	const h = TL.height - TL.top - TL.bottom;
	let stop = -1, seen = false;	/* a first start with no stop before: record --paused, off from 0 */
	const paused = function (a, b) {
		const r = el("svg:rect", { x: tlX(a), y: TL.top, width: Math.max(tlX(b) - tlX(a), 1), height: h,
					   class: "paused" });
		svgTitle(r, "paused from " + seconds(a) + " to " + seconds(b));
		svg.appendChild(r);
	};
	for (const e of D.timeline.events || []) {
		const bound = e.event === "start" || e.event === "stop";
		if (e.event === "stop" && stop < 0)
			stop = e.t_ns;
		else if (e.event === "start" && (stop >= 0 || !seen)) {
			paused(Math.max(stop, 0), e.t_ns);
			stop = -1;
		} else if (e.event === "mark") {
			const x = tlX(e.t_ns), m = el("svg:line", { x1: x, x2: x, y1: TL.top, y2: TL.top + h, class: "mark" });
			svgTitle(m, "mark " + e.label + " at " + seconds(e.t_ns));
			svg.appendChild(m);
			svg.appendChild(el("svg:text", { x: x + 2, y: TL.top + 10, class: "axis" }, e.label));
		}
		seen = seen || bound;
	}
	if (stop >= 0)
		paused(stop, EDGES[LAST]);
}
function drawTimelineEvents(svg) {
	const y = TL.height - TL.bottom;
	const lifecycle = (D.timeline.events || []).filter(function (x) {
		return ["fork", "exec", "exit"].includes(x.event);
	});
	for (const e of lifecycle) {
		const x = tlX(e.t_ns);
		const m = el("svg:line", { x1: x, x2: x, y1: y, y2: y + (e.event === "exit" ? 8 : 14),
					  stroke: pidColour(e.pid), class: "event " + e.event });
		svgTitle(m, e.event + " " + e.pid + (e.child ? " → " + e.child : "") + (e.path ? " " + e.path : "") +
			 " at " + seconds(e.t_ns));
		svg.appendChild(m);
	}
	svg.appendChild(el("svg:text", { x: TL.left, y: TL.height - 4, class: "axis" }, "0 s"));
	svg.appendChild(el("svg:text", { x: TL.width - TL.right - 60, y: TL.height - 4, class: "axis" },
			   seconds(EDGES[LAST])));
}
function drawTimelineSelection(svg) {
	const h = TL.height - TL.top - TL.bottom;
	if (state.from > 0 || state.to < LAST)
		svg.appendChild(el("svg:rect", { x: tlX(EDGES[state.from]), y: TL.top, height: h, class: "window",
						  width: Math.max(tlX(EDGES[state.to]) - tlX(EDGES[state.from]), 1) }));
	if (state.at >= 0 && state.weight === "live")
		svg.appendChild(el("svg:line", { x1: tlX(EDGES[state.at]), x2: tlX(EDGES[state.at]), y1: TL.top,
						  y2: TL.top + h, class: "instant" }));
}
function drawTimeline() {
	const svg = el("svg:svg", { width: TL.width, height: TL.height, id: "timeline-svg" });
	svg.appendChild(el("svg:rect", { x: 0, y: 0, width: TL.width, height: TL.height, fill: "#fff" }));
	drawTimelineControl(svg);
	drawTimelineSeries(svg);
	drawTimelineEvents(svg);
	drawTimelineSelection(svg);
	let down = null;
	svg.addEventListener("mousedown", function (ev) { down = ev.offsetX; });
	svg.addEventListener("mouseup", function (ev) {
		if (down === null)
			return;
		const a = Math.min(down, ev.offsetX), b = Math.max(down, ev.offsetX);
		down = null;
		if (b - a > 3) {	/* a span: the allocations in it */
			state.from = edgeOf(tlNs(a), false);
			state.to = Math.max(edgeOf(tlNs(b), true), state.from + 1);
			state.weight = state.weight === "count" ? "count" : "bytes";
		} else {		/* an instant: what was live then */
			state.at = edgeOf(tlNs(a), true);
			state.weight = "live";
		}
		state.zoom = [];
		update();
	});
	const legend = el("div", { class: "legend" });
	for (const g of exeGroups() || []) {
		const s = el("span", { class: "key" }, baseName(g.exe) + " (" + g.procs + " processes)");
		s.style.borderColor = exeColour(g.exe);
		legend.appendChild(s);
	}
	for (const p of exeGroups() ? [] : D.timeline.processes) {
		const s = el("span", { class: "key" }, p.pid + " " + p.exe.split("/").pop());
		s.style.borderColor = pidColour(p.pid);
		legend.appendChild(s);
	}
	for (const k of [["mapped", "#208040", "mapped, dash-dot (right axis)"],
			 ["rss", "#2060c0", "RSS, dashed (right axis)"]]) {
		if (!D.timeline[k[0]])
			continue;
		const s = el("span", { class: "key" }, k[2]);
		s.style.borderColor = k[1];
		legend.appendChild(s);
	}
	document.getElementById("timeline").replaceChildren(svg, legend);
}

/* ---- controls, and the state the page is in, for its reader and for tests ---- */

function drawControls() {
	const box = document.getElementById("controls");
	const sel = el("select", { id: "weight" });
	for (const k in WEIGHTS)
		sel.appendChild(el("option", { value: k }, WEIGHTS[k]));
	sel.addEventListener("change", function () {
		state.weight = sel.value;
		if (state.weight === "live" && state.at < 0)
			state.at = edgeOf(D.report.totals.peak_ts_ns, false) + 1;
		update();
	});
	const inv = el("input", { type: "checkbox", id: "invert" });
	inv.addEventListener("change", function () {
		state.invert = inv.checked;
		state.zoom = [];
		update();
	});
	const hide = el("input", { type: "checkbox", id: "hide" });
	hide.addEventListener("change", function () {
		state.hide = hide.checked;
		state.zoom = [];
		update();
	});
	const hideLab = el("label", {}, " hide runtime frames ");
	hideLab.appendChild(hide);
	const search = el("input", { type: "search", id: "search", placeholder: "search (regular expression)" });
	search.addEventListener("change", function () {
		state.search = search.value;
		update();
	});
	const reset = el("button", { id: "reset" }, "reset zoom and window");
	reset.addEventListener("click", function () {
		Object.assign(state, { from: 0, to: LAST, at: -1, zoom: [], weight: "peak", focus: false });
		update();
	});
	const lab = el("label", {}, " inverted ");
	lab.appendChild(inv);
	const roots = el("select", { id: "roots" });
	for (const r of [["one", "one root"], ["exe", "a root per executable"], ["proc", "a root per process"]])
		roots.appendChild(el("option", { value: r[0] }, r[1]));
	roots.addEventListener("change", function () {
		state.roots = roots.value;
		state.zoom = [];
		update();
	});
	box.replaceChildren(sel, roots, lab, hideLab, search, reset, el("span", { id: "status" }));
}
function describe() {
	if (state.weight === "live")
		return "live at " + seconds(EDGES[state.at]);
	if (state.weight === "bytes" || state.weight === "count")
		return "from " + seconds(EDGES[state.from]) + " to " + seconds(EDGES[state.to]);
	return state.weight === "peak" ? "at the peak, " + seconds(D.report.totals.peak_ts_ns) : "at exit or the end";
}
function update() {
	if (state.weight === "live" && state.at < 0)
		state.weight = "peak";
	state.focus = state.focus && state.zoom.length > 0;
	writeHash();
	document.getElementById("weight").value = state.weight;
	document.getElementById("invert").checked = state.invert;
	document.getElementById("hide").checked = state.hide;
	document.getElementById("roots").value = state.roots;
	document.getElementById("search").value = state.search;
	drawTimeline();
	const sw = stackWeights(), root = buildTree(sw), f = drawFlame(root);
	drawTable(sw);
	const out = {
		weight: state.weight, invert: state.invert, hide: state.hide, search: state.search, zoom: state.zoom,
		from_ns: EDGES[state.from], to_ns: EDGES[state.to], at_ns: state.at >= 0 ? EDGES[state.at] : null,
		from: secondsExact(EDGES[state.from]), to: secondsExact(EDGES[state.to]),
		total: root.w, allocations: root.count, shown: f.shown, shown_name: f.zoomName, matched: f.matched,
		top: sortedChildren(root).map(function (c) { return c.name; }), focus: state.focus, table: table.shown,
		timeline_groups: (exeGroups() || []).map(function (g) {
			return [baseName(g.exe), g.procs, g.peak, g.live.length];
		}), timeline_points: D.timeline.t_ns.length,
		timeline_series: document.querySelectorAll("#timeline-svg .series").length,
		roots: state.roots, root_weights: sortedChildren(root).map(function (c) { return [c.name, c.w, c.count]; }),
	};
	document.getElementById("status").textContent = " " + WEIGHTS[state.weight] + " " + describe() + ": " +
		fmtWeight(root.w) + (state.search ? "; search matched " + fmtWeight(f.matched) + " (" +
		(root.w ? (100 * f.matched / root.w).toFixed(2) : "0.00") + "%)" : "");
	document.getElementById("mt-state").textContent = JSON.stringify(out);
}

startPage(["header", "timeline", "controls", "flame", "sites"], function () {
	drawHeader();
	drawControls();
}, readHash, update);
