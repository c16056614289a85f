// The renderer of report.html (inlined by lab/evidence/report-html.ts). It reads the run's data
// from the report-data JSON element and builds every element with DOM APIs: text goes in
// through textContent and attributes through setAttribute, never as HTML. No network: links
// point at the run's files beside the page.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var ROW = 16; // px per row of a lane (matches --row-h)
  var LABEL_W = 230; // px of lane labels (matches --label-w)

  // ---------------------------------------------------------------------------------------
  // Small DOM helpers

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) {
      for (var k in attrs) {
        if (attrs[k] === undefined || attrs[k] === null) continue;
        if (k === "text") e.textContent = String(attrs[k]);
        else if (k === "class") e.className = attrs[k];
        else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), attrs[k]);
        else e.setAttribute(k, String(attrs[k]));
      }
    }
    (children || []).forEach(function (c) {
      if (c === undefined || c === null) return;
      e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return e;
  }
  function href(rel) {
    return rel.split("/").map(encodeURIComponent).join("/");
  }
  function fileLink(rel, label) {
    return el("a", { href: href(rel), text: label || rel });
  }
  /** "scenarios/x/lab/transcripts/operator.jsonl#n=12": a link to the file, the position as text. */
  function sourceLink(src) {
    if (!src) return null;
    var i = src.indexOf("#");
    var file = i < 0 ? src : src.slice(0, i);
    return el("span", null, [fileLink(file), i < 0 ? "" : " " + src.slice(i + 1)]);
  }
  function verdictBadge(v) {
    return el("span", { class: "verdict v-" + v, text: v });
  }
  function pretty(v) {
    return typeof v === "string" ? v : JSON.stringify(v, null, 2);
  }
  function clock(t) {
    return new Date(t).toISOString().slice(11, 23);
  }
  function secs(ms) {
    return ms < 1000 ? Math.round(ms) + " ms" : (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + " s";
  }
  function section(id) {
    return document.getElementById(id);
  }

  // ---------------------------------------------------------------------------------------
  // Header

  var run = data.run;
  document.title = "fleetlab run " + run.id;
  section("title").textContent = "fleetlab run " + run.id;
  var metaBits = [
    "seed " + run.seed,
    run.openclawVersion ? "openclaw " + run.openclawVersion + (run.openclawBuild ? " (build of " + run.openclawBuild.source + ", sha256 " + run.openclawBuild.sha256.slice(0, 16) + "...)" : "") : null,
    "started " + run.startedAt,
    run.endedAt ? "ended " + run.endedAt : "not ended (cut, or still running when written)",
    run.host ? run.host.platform + ", " + run.host.cpus + " cpus, " + run.host.memGiB + " GiB, node " + run.host.node : null,
    run.engine ? "docker " + run.engine.version : null,
    "report written " + data.generatedAt,
  ];
  metaBits.forEach(function (b) {
    if (b) section("meta").appendChild(el("span", { text: b }));
  });

  // ---------------------------------------------------------------------------------------
  // Verdicts

  (function verdicts() {
    var s = section("verdicts");
    var count = {};
    data.scenarios.forEach(function (r) {
      count[r.verdict] = (count[r.verdict] || 0) + 1;
    });
    var parts = Object.keys(count).map(function (k) {
      return count[k] + " " + k;
    });
    if (run.neverRan.length) parts.push(run.neverRan.length + " never ran");
    s.appendChild(el("div", { class: "summary", text: data.scenarios.length + " scenario(s): " + parts.join(", ") }));
    var tbody = el("tbody");
    var table = el("table", { id: "verdict-table" }, [
      el("thead", null, [el("tr", null, ["scenario", "verdict", "time", "started", "detail", "evidence", "lab", ""].map(function (h) {
        return el("th", { text: h });
      }))]),
      tbody,
    ]);
    data.scenarios.forEach(function (r) {
      var links = el("td", { class: "links" });
      r.links.forEach(function (l) {
        if (/(^|\/)(scenario\.log|verdict\.json|findings\.json)$/.test(l.href)) links.appendChild(fileLink(l.href, l.label));
      });
      var others = r.links.filter(function (l) {
        return !/(^|\/)(scenario\.log|verdict\.json|findings\.json)$/.test(l.href);
      });
      if (others.length) {
        var more = el("details", { class: "more" }, [el("summary", { text: "+" + others.length })]);
        others.forEach(function (l) {
          more.appendChild(el("div", null, [fileLink(l.href, l.label)]));
        });
        links.appendChild(more);
      }
      var lab = data.labs.find(function (l) {
        return l.key === r.lab;
      });
      tbody.appendChild(
        el("tr", { "data-scenario": r.name, "data-verdict": r.verdict }, [
          el("td", null, [el("b", { text: r.name })]),
          el("td", null, [verdictBadge(r.verdict)]),
          el("td", { class: "num", text: r.seconds.toFixed(1) + " s" }),
          el("td", { class: "num", text: r.t0 ? clock(r.t0).slice(0, 8) + (r.bounds === "scenario.log" ? " ≈" : "") : "" }),
          el("td", { class: "detail" }, [r.detail ? el("pre", { text: r.detail }) : ""]),
          links,
          el("td", null, [lab ? el("a", { href: "#lab-" + lab.key, text: lab.evidence === "shared-lab" ? "shared" : "own" }) : ""]),
          el("td", null, [r.t0 ? el("button", { class: "linkish", text: "timeline", onclick: function () { showScenario(r.name, true); } }) : ""]),
        ]),
      );
    });
    run.neverRan.forEach(function (name) {
      tbody.appendChild(el("tr", { "data-scenario": name, "data-verdict": "not-run" }, [
        el("td", null, [el("b", { text: name })]),
        el("td", null, [verdictBadge("not-run")]),
        el("td"), el("td"),
        el("td", { class: "detail", text: "never ran: the run was cut before this scenario" }),
        el("td"), el("td"), el("td"),
      ]));
    });
    s.appendChild(table);
    if (data.scenarios.some(function (r) { return r.bounds === "scenario.log"; })) {
      s.appendChild(el("p", { class: "muted", text: "≈: this run.json predates recorded scenario start and end times; they are estimated from scenario.log (end = its last line, start = end minus the scenario's time)." }));
    }
  })();

  // ---------------------------------------------------------------------------------------
  // Findings, differs from reference, checks

  function findingCard(c) {
    var rows = [
      el("div", null, [el("b", { text: c.findingId }), " ", verdictBadge(c.outcome), " ", el("span", { class: "muted", text: c.scenario + " · " + c.kind })]),
      el("div", null, [el("span", { class: "k", text: "expected" }), el("span", { text: c.expectation })]),
    ];
    if (c.observed !== undefined) rows.push(el("div", null, [el("span", { class: "k", text: "observed" }), el("pre", { text: pretty(c.observed) })]));
    if (c.registered !== undefined) rows.push(el("div", null, [el("span", { class: "k", text: "registered" }), el("pre", { text: pretty(c.registered) })]));
    if (c.note) rows.push(el("div", null, [el("span", { class: "k", text: "note" }), el("span", { text: c.note })]));
    return el("div", { class: "finding o-" + c.outcome, "data-finding": c.findingId, "data-outcome": c.outcome }, rows);
  }

  (function findings() {
    var s = section("findings");
    var list = data.checks.filter(function (c) {
      return c.outcome !== "pass" && c.kind === "shortfall";
    });
    if (!list.length) s.appendChild(el("p", { class: "muted", text: "No shortfalls: every expectation of kind shortfall held." }));
    list.forEach(function (c) {
      s.appendChild(findingCard(c));
    });
  })();

  (function differs() {
    var s = section("differs");
    var list = data.checks.filter(function (c) {
      return c.kind === "differs-from-reference";
    });
    if (!list.length) {
      s.appendChild(el("p", { class: "muted", text: "No check of kind differs-from-reference in this run." }));
      return;
    }
    var tbody = el("tbody");
    list.forEach(function (c) {
      tbody.appendChild(el("tr", { "data-finding": c.findingId, "data-outcome": c.outcome }, [
        el("td", null, [el("b", { text: c.findingId })]),
        el("td", { text: c.scenario }),
        el("td", null, [verdictBadge(c.outcome)]),
        el("td", { class: "detail", text: c.expectation }),
        el("td", { class: "detail" }, [c.observed === undefined ? "" : el("pre", { text: pretty(c.observed) })]),
      ]));
    });
    s.appendChild(el("table", null, [el("thead", null, [el("tr", null, ["finding", "scenario", "outcome", "the reference expects", "OpenClaw did"].map(function (h) { return el("th", { text: h }); }))]), tbody]));
  })();

  (function checks() {
    var s = section("checks");
    if (!data.checks.length) {
      s.appendChild(el("p", { class: "muted", text: "No checks recorded." }));
      return;
    }
    var tbody = el("tbody");
    data.checks.forEach(function (c) {
      tbody.appendChild(el("tr", { "data-check": c.findingId, "data-outcome": c.outcome }, [
        el("td", { text: c.scenario }),
        el("td", null, [el("b", { text: c.findingId })]),
        el("td", { text: c.kind }),
        el("td", null, [verdictBadge(c.outcome)]),
        el("td", { class: "detail", text: c.expectation }),
        el("td", { class: "detail" }, [c.outcome === "pass" || c.observed === undefined ? "" : el("details", null, [el("summary", { text: "observed" }), el("pre", { text: pretty(c.observed) })])]),
      ]));
    });
    s.appendChild(el("table", null, [el("thead", null, [el("tr", null, ["scenario", "check", "kind", "outcome", "expectation", ""].map(function (h) { return el("th", { text: h }); }))]), tbody]));
  })();

  // ---------------------------------------------------------------------------------------
  // Files

  (function files() {
    var s = section("files");
    var runLinks = el("div", { class: "links" }, [el("b", { text: "run: " })]);
    run.links.forEach(function (l) {
      runLinks.appendChild(fileLink(l.href, l.label));
    });
    s.appendChild(runLinks);
    data.labs.forEach(function (lab) {
      var box = el("div", { id: "lab-" + lab.key }, [el("h3", { text: "lab " + lab.evidence + " (" + lab.key + ")" })]);
      if (lab.members.length) {
        box.appendChild(el("div", { class: "muted", text: lab.members.map(function (m) { return m.alias + " " + m.kind + " " + m.ip + " " + m.container; }).join(" · ") }));
      }
      var groups = {};
      lab.links.forEach(function (l) {
        var g = l.label.indexOf("/") < 0 ? "" : l.label.slice(0, l.label.indexOf("/"));
        (groups[g] = groups[g] || []).push(l);
      });
      Object.keys(groups).sort().forEach(function (g) {
        var line = el("div", { class: "links" }, [el("b", { text: (g || "lab") + ": " })]);
        groups[g].forEach(function (l) {
          line.appendChild(fileLink(l.href, l.label.slice(g ? g.length + 1 : 0)));
        });
        box.appendChild(line);
      });
      s.appendChild(box);
    });
  })();

  // ---------------------------------------------------------------------------------------
  // Timeline

  var laneById = {};
  data.lanes.forEach(function (l) {
    laneById[l.id] = l;
  });
  var labByKey = {};
  data.labs.forEach(function (l) {
    labByKey[l.key] = l;
  });
  var itemsByLane = {};
  data.items.forEach(function (it, i) {
    it.i = i;
    (itemsByLane[it.lane] = itemsByLane[it.lane] || []).push(it);
  });
  var frameKeys = {};
  data.items.forEach(function (it) {
    if (it.kind === "frame" && it.key) frameKeys[it.key] = (frameKeys[it.key] || 0) + 1;
  });

  var state = { view: "run", zoom: 1, filter: "", frames: true, conns: true, selected: null };
  var tl = section("timeline");
  var viewSel = el("select", { id: "tl-view", onchange: function () { state.view = viewSel.value; state.zoom = 1; draw(); } });
  viewSel.appendChild(el("option", { value: "run", text: "whole run" }));
  var optLabs = el("optgroup", { label: "labs" });
  data.labs.forEach(function (l) {
    if (l.t0 !== undefined) optLabs.appendChild(el("option", { value: "lab:" + l.key, text: l.evidence }));
  });
  viewSel.appendChild(optLabs);
  var optScen = el("optgroup", { label: "scenarios" });
  data.scenarios.forEach(function (s) {
    if (s.t0 !== undefined) optScen.appendChild(el("option", { value: "scenario:" + s.name, text: s.name + " (" + s.verdict + ")" }));
  });
  viewSel.appendChild(optScen);
  var keyList = el("datalist", { id: "frame-keys" });
  Object.keys(frameKeys).sort().forEach(function (k) {
    keyList.appendChild(el("option", { value: k, label: frameKeys[k] + " frames" }));
  });
  var filterIn = el("input", { type: "text", id: "tl-filter", list: "frame-keys", placeholder: "method or event, e.g. chat.send", size: 28, oninput: function () { state.filter = filterIn.value.trim().toLowerCase(); draw(); } });
  var framesCb = el("input", { type: "checkbox", id: "tl-frames", onchange: function () { state.frames = framesCb.checked; draw(); } });
  framesCb.checked = true;
  var connsCb = el("input", { type: "checkbox", id: "tl-conns", onchange: function () { state.conns = connsCb.checked; draw(); } });
  connsCb.checked = true;
  var zoomOut = el("button", { text: "−", title: "zoom out", onclick: function () { state.zoom = Math.max(1, state.zoom / 2); draw(); } });
  var zoomIn = el("button", { text: "+", title: "zoom in", onclick: function () { state.zoom = Math.min(256, state.zoom * 2); draw(); } });
  var zoomLabel = el("span", { class: "muted" });
  tl.appendChild(el("div", { class: "controls" }, [
    el("label", null, ["view ", viewSel]),
    el("label", null, ["frames matching ", filterIn]), keyList,
    el("label", null, [framesCb, " frames"]),
    el("label", null, [connsCb, " connection lanes"]),
    el("span", null, ["zoom ", zoomOut, " ", zoomIn, " ", zoomLabel]),
  ]));
  var legend = el("div", { class: "legend" });
  [["ok", "ok / final / running"], ["error", "error"], ["warn", "aborted / cancelled / close"], ["fault", "fault / kill"], ["open", "no end seen"], ["info", "connection / http"], ["out", "frame sent (→)"], ["in", "frame received (←)"], ["muted", "other"]].forEach(function (x) {
    legend.appendChild(el("span", null, [el("i", { class: "t-" + x[0] }), x[1]]));
  });
  legend.appendChild(el("span", { class: "muted", text: "Click any box or tick to open its full content (credentials redacted)." }));
  tl.appendChild(legend);
  var about = el("div", { id: "tl-about" });
  tl.appendChild(about);
  var notices = el("div");
  tl.appendChild(notices);
  var left = data.caps.framesTotal - data.caps.framesEmbedded;
  tl.appendChild(el("div", { class: left ? "notices" : "muted", id: "tl-caps", text: "Frames embedded: " + data.caps.framesEmbedded + " of " + data.caps.framesTotal + (left ? " (" + left + " left out)" : "") + "; at most " + data.caps.framesPerConnectionAndScenario + " per connection and scenario (the first and the last half), each frame's content up to " + data.caps.frameContentChars + " characters. The transcripts beside this file (Files, below) hold every frame." }));
  var scroll = el("div", { class: "tl-scroll", id: "tl-scroll" });
  tl.appendChild(scroll);

  var detail = section("detail");

  function windowOf(view) {
    var pad = function (a, b) { var p = Math.max(500, (b - a) * 0.02); return [a - p, b + p]; };
    if (view.indexOf("scenario:") === 0) {
      var s = data.scenarios.find(function (x) { return "scenario:" + x.name === view; });
      if (s) return { range: pad(s.t0, s.t1), labs: s.lab ? [s.lab] : [], scenario: s };
    }
    if (view.indexOf("lab:") === 0) {
      var l = labByKey[view.slice(4)];
      if (l) return { range: pad(l.t0, l.t1), labs: [l.key] };
    }
    return { range: [data.range.t0, data.range.t1], labs: data.labs.map(function (l) { return l.key; }) };
  }

  function visible(it, w) {
    var end = it.end === undefined ? it.t : it.end;
    if (end < w.range[0] || it.t > w.range[1]) return false;
    if (it.kind === "frame") {
      if (!state.frames) return false;
      if (state.filter && (it.key || "").toLowerCase().indexOf(state.filter) < 0 && it.label.toLowerCase().indexOf(state.filter) < 0) return false;
    }
    return true;
  }

  function draw() {
    var w = windowOf(state.view);
    var span = Math.max(1, w.range[1] - w.range[0]);
    var avail = Math.max(600, (scroll.clientWidth || document.documentElement.clientWidth - 40) - LABEL_W - 4);
    var width = Math.round(avail * state.zoom);
    var x = function (t) { return ((t - w.range[0]) / span) * width; };
    zoomLabel.textContent = "×" + state.zoom + " · " + secs(span) + " shown";
    while (scroll.firstChild) scroll.removeChild(scroll.firstChild);
    while (notices.firstChild) notices.removeChild(notices.firstChild);
    while (about.firstChild) about.removeChild(about.firstChild);
    if (w.scenario) {
      var sc = w.scenario;
      about.appendChild(el("div", { class: "summary" }, [
        sc.name + " ", verdictBadge(sc.verdict), " " + sc.seconds.toFixed(1) + " s, " + clock(sc.t0) + " → " + clock(sc.t1),
        sc.bounds === "scenario.log" ? el("span", { class: "muted", text: " (start and end estimated from scenario.log)" }) : "",
        sc.detail ? el("div", { class: "muted", text: sc.detail }) : "",
      ]));
    }
    var root = el("div", { class: "tl", style: "width:" + (width + LABEL_W) + "px" });

    // Time axis: about one tick per 110 px at a round step.
    var axis = el("div", { class: "axis", style: "margin-left:" + LABEL_W + "px;width:" + width + "px" });
    var steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000];
    var step = steps.find(function (s) { return (s / span) * width >= 110; }) || 600000;
    for (var t = Math.ceil(w.range[0] / step) * step; t <= w.range[1]; t += step) {
      axis.appendChild(el("div", { class: "tick", style: "left:" + x(t) + "px", text: step >= 1000 ? clock(t).slice(0, 8) : clock(t) }));
    }
    root.appendChild(axis);

    var shownLabs = [""].concat(w.labs);
    var drawnFrames = 0;
    shownLabs.forEach(function (labKey) {
      var lanes = data.lanes.filter(function (l) {
        return l.lab === labKey && (state.conns || l.group !== "connection");
      });
      var rows = [];
      lanes.forEach(function (lane) {
        var items = (itemsByLane[lane.id] || []).filter(function (it) { return visible(it, w); });
        if (!items.length && lane.group !== "member") return;
        rows.push({ lane: lane, items: items });
      });
      if (!rows.length) return;
      var block = el("div", { class: "labblock", "data-lab": labKey });
      if (labKey) {
        var lab = labByKey[labKey];
        block.appendChild(el("div", { class: "labheadrow" }, [el("span", { class: "labhead", text: "lab " + (lab ? lab.evidence : labKey) })]));
      }
      rows.forEach(function (row) {
        var r = drawLane(row.lane, row.items, x, width);
        drawnFrames += r.frames;
        block.appendChild(r.el);
      });
      // Faults in force, drawn across every lane of their lab.
      data.items.forEach(function (it) {
        if (!it.band || laneById[it.lane].lab !== labKey || !visible(it, w)) return;
        var left = Math.max(0, x(it.t));
        var right = Math.min(width, x(it.end === undefined ? it.t : it.end));
        block.appendChild(el("div", { class: "band", style: "left:" + (LABEL_W + left) + "px;width:" + Math.max(2, right - left) + "px", title: it.label }));
      });
      // Scenario starts, drawn across the lab too.
      if (labKey) data.scenarios.forEach(function (s) {
        if (s.lab !== labKey || s.t0 === undefined || s.t0 < w.range[0] || s.t0 > w.range[1]) return;
        block.appendChild(el("div", { class: "scenariobox", style: "left:" + (LABEL_W + x(s.t0)) + "px", title: "scenario " + s.name + " starts" }));
      });
      root.appendChild(block);
    });
    if (root.childNodes.length === 1) root.appendChild(el("div", { class: "empty", text: "Nothing recorded in this window." }));
    scroll.appendChild(root);

    // Notices of what was left out in this view, and where the rest is.
    var ns = data.notices.filter(function (n) {
      return (!n.lab || w.labs.indexOf(n.lab) >= 0) && (n.t === undefined || ((n.end === undefined ? n.t : n.end) >= w.range[0] && n.t <= w.range[1]));
    });
    if (ns.length) {
      var ul = el("ul");
      ns.forEach(function (n) {
        ul.appendChild(el("li", { class: "notice" }, [n.message, n.file ? " " : "", n.file ? fileLink(n.file, "(open)") : ""]));
      });
      notices.appendChild(el("div", { class: "notices", id: "tl-notices" }, [el("b", { text: ns.length + " notice(s) for this view: not everything is drawn" }), ul]));
    }
    scroll.setAttribute("data-frames-drawn", String(drawnFrames));
  }

  /** One lane: boxes packed into rows (overlapping turns, tool calls), instants in a row of their own
   * with the spans that only say "alive" behind them. */
  function drawLane(lane, items, x, width) {
    var boxes = [];
    var instants = [];
    var bgs = [];
    items.forEach(function (it) {
      // Spans that only say "alive" (a connection open, a container running) sit behind the ticks.
      if ((it.kind === "conn" || (it.kind === "container" && it.label === "running")) && it.end !== undefined) bgs.push(it);
      else if (it.end !== undefined && it.kind !== "frame") boxes.push(it);
      else instants.push(it);
    });
    boxes.sort(function (a, b) { return a.t - b.t; });
    var rowEnds = [];
    var placed = boxes.map(function (it) {
      var left = x(it.t);
      var right = Math.max(left + 2, x(it.end));
      var row = 0;
      while (row < rowEnds.length && rowEnds[row] > left) row++;
      rowEnds[row] = right + 1;
      return { it: it, left: left, right: right, row: row };
    });
    var instantRow = instants.length || bgs.length ? rowEnds.length : -1;
    var nRows = Math.max(1, rowEnds.length + (instantRow >= 0 ? 1 : 0));
    var track = el("div", { class: "track", style: "width:" + width + "px;height:" + nRows * ROW + "px" });
    var frames = 0;
    var add = function (it, left, w, row, cls) {
      var e = el("div", {
        class: "item k-" + it.kind + " t-" + it.tone + (cls ? " " + cls : ""),
        style: "left:" + left + "px;top:" + (row * ROW + 1) + "px" + (w === null ? "" : ";width:" + w + "px"),
        title: it.label + " · " + clock(it.t) + (it.end !== undefined ? " → " + clock(it.end) + " (" + secs(it.end - it.t) + ")" : ""),
        "data-kind": it.kind,
        "data-tone": it.tone,
        "data-key": it.key,
        "data-i": it.i,
      });
      if (w !== null && w > 28 && cls !== "bg") e.textContent = it.label;
      if (it.marks && w !== null) {
        it.marks.forEach(function (m) {
          var mx = x(m.t) - left;
          if (mx > 0 && mx < w) e.appendChild(el("span", { class: "mark", style: "left:" + mx + "px", title: m.label + " " + clock(m.t) }));
        });
      }
      if (cls !== "bg") {
        e.addEventListener("click", function (ev) {
          ev.stopPropagation();
          // A scenario's box zooms to it; anything else opens its content.
          if (it.kind === "scenario" && state.view !== "scenario:" + it.key) showScenario(it.key, false);
          else open(it, e);
        });
      }
      track.appendChild(e);
    };
    bgs.forEach(function (it) {
      var left = Math.max(0, x(it.t));
      add(it, left, Math.max(2, Math.min(width, x(it.end)) - left), instantRow, "bg");
    });
    placed.forEach(function (p) {
      var left = Math.max(0, p.left);
      add(p.it, left, Math.max(2, Math.min(width, p.right) - left), p.row, "");
    });
    instants.forEach(function (it) {
      if (it.kind === "frame") frames++;
      add(it, x(it.t), null, instantRow, "instant");
    });
    var name = el("div", { class: "lname", title: lane.label + (lane.source ? " · " + lane.source : ""), style: "height:" + nRows * ROW + "px;line-height:" + ROW + "px" }, [lane.label]);
    return { el: el("div", { class: "lane g-" + lane.group, "data-lane": lane.id, "data-group": lane.group }, [name, track]), frames: frames };
  }

  function open(it, node) {
    if (state.selected) state.selected.classList.remove("sel");
    state.selected = node;
    node.classList.add("sel");
    while (detail.firstChild) detail.removeChild(detail.firstChild);
    var lane = laneById[it.lane];
    detail.appendChild(el("button", { class: "close", text: "close", onclick: function () { detail.className = ""; } }));
    detail.appendChild(el("h4", { text: it.label }));
    detail.appendChild(el("div", { class: "muted", text: it.kind + " on " + (lane ? lane.label : it.lane) + " · " + new Date(it.t).toISOString() + (it.end !== undefined ? " → " + new Date(it.end).toISOString() + " (" + secs(it.end - it.t) + ")" : "") }));
    if (it.source) detail.appendChild(el("div", null, ["from ", sourceLink(it.source)]));
    if (it.marks) detail.appendChild(el("div", { text: it.marks.map(function (m) { return m.label + " " + clock(m.t); }).join(" · ") }));
    if (it.detail !== undefined) detail.appendChild(el("pre", { text: pretty(it.detail) }));
    detail.className = "open";
  }

  function showScenario(name, scrollTo) {
    state.view = "scenario:" + name;
    state.zoom = 1;
    viewSel.value = state.view;
    draw();
    if (scrollTo) tl.scrollIntoView();
  }

  // A link to #scenario=<name> or #lab=<key> opens the page with that timeline first (moved
  // to the top rather than scrolled to: a headless screenshot does not repaint after a scroll).
  var hash = decodeURIComponent(location.hash.slice(1));
  var m = /^(scenario|lab)=(.+)$/.exec(hash);
  if (m && ((m[1] === "scenario" && data.scenarios.some(function (s) { return s.name === m[2] && s.t0 !== undefined; })) || (m[1] === "lab" && labByKey[m[2]]))) {
    tl.parentNode.insertBefore(tl, tl.parentNode.firstChild);
    state.view = m[1] + ":" + m[2];
    viewSel.value = state.view;
  } else if (hash === "timeline=run") tl.parentNode.insertBefore(tl, tl.parentNode.firstChild);
  draw();
  window.addEventListener("resize", function () { draw(); });
  document.body.setAttribute("data-rendered", "true");
})();
