extension MapRenderer {
    /// The map as one self-contained HTML page: the SVG inline, a tooltip with the event's
    /// details over each marker, and a time slider (with a play button) that shows each device's
    /// track and position, and the events, up to a moment (`#t=0.25` in the address opens it a
    /// quarter of the way through, `#m=12` with marker 12's details shown). No network, no
    /// external script.
    public func html() -> String { page().string }

    /// The HTML page's bytes.
    func page() -> MarkupWriter {
        var o = MarkupWriter(capacity: 1 << 21)
        o.raw("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>")
        o.escaped(titleText)
        o.raw("</title>\n<style>\n")
        o.raw(Self.pageStyle)
        o.raw("</style></head>\n<body>\n<div id=\"wrap\">\n")
        o.raw(drawing(for: .html))
        o.raw("<div id=\"controls\"><button id=\"play\" type=\"button\" title=\"Play the replay\">▶</button>")
        o.raw("<input id=\"time\" type=\"range\" min=\"0\" max=\"1000\" value=\"1000\" aria-label=\"time\">")
        o.raw("<span id=\"clock\"></span></div>\n")
        o.raw("<div id=\"tip\" role=\"tooltip\"></div>\n</div>\n")
        o.raw("<script type=\"application/json\" id=\"map-data\">")
        writeData(&o)
        o.raw("</script>\n<script>\n")
        o.raw(Self.pageScript)
        o.raw("</script>\n</body></html>\n")
        return o
    }

    /// {"t0", "t1", "markers": [[kind, device, region, time, distance, request, title, count, t − t0]],
    /// "tracks": [{"t": [t − t0], "l": [length], "x": […], "y": […]}]}.
    private func writeData(_ o: inout MarkupWriter) {
        let t0 = span?.0 ?? 0, t1 = span?.1 ?? 0
        o.raw("{\"t0\":")
        o.number(t0)
        o.raw(",\"t1\":")
        o.number(t1)
        o.raw(",\"markers\":[")
        for (m, marker) in markers.enumerated() {
            let e = data.events[marker.event]
            if m > 0 { o.raw(",") }
            o.raw("[")
            o.jsonString(e.kind.rawValue)
            o.raw(",")
            o.jsonString(e.device)
            o.raw(",")
            if let r = e.region { o.jsonString(r) } else { o.raw("null") }
            o.raw(",")
            o.jsonString(e.time)
            o.raw(",")
            if let d = e.distance { o.number(d) } else { o.raw("null") }
            o.raw(",")
            if let r = e.request { o.jsonString(r) } else { o.raw("null") }
            o.raw(",")
            if let t = e.title { o.jsonString(t) } else { o.raw("null") }
            o.raw(",")
            o.integer(marker.count)
            o.raw(",")
            o.number(e.t - t0)
            o.raw("]")
        }
        o.raw("],\"tracks\":[")
        for (k, track) in tracks.enumerated() {
            if k > 0 { o.raw(",") }
            func list(_ name: String, _ values: [Double], minus: Double = 0) {
                o.raw("\"\(name)\":[")
                for (j, v) in values.enumerated() {
                    if j > 0 { o.raw(",") }
                    o.number(v - minus)
                }
                o.raw("]")
            }
            o.raw("{")
            list("t", track.t, minus: t0)
            o.raw(",")
            list("l", track.length)
            o.raw(",")
            list("x", track.x)
            o.raw(",")
            list("y", track.y)
            o.raw("}")
        }
        o.raw("]}")
    }

    static let pageStyle = """
        body{margin:0;background:#e9e6df;font:13px "DejaVu Sans",Verdana,Arial,sans-serif;color:#222}
        #wrap{position:relative;display:inline-block;margin:8px}
        #wrap svg{display:block;background:#f7f5f0;box-shadow:0 1px 4px rgba(0,0,0,.25)}
        #controls{display:flex;align-items:center;gap:10px;padding:8px 4px}
        #time{flex:1}
        #play{width:34px;height:28px;font-size:14px;cursor:pointer}
        #clock{font-variant-numeric:tabular-nums;min-width:15em}
        #tip{position:absolute;display:none;pointer-events:none;background:#fff;border:1px solid #999;border-radius:4px;
          padding:6px 8px;box-shadow:0 2px 6px rgba(0,0,0,.25);max-width:340px;line-height:1.4}
        #tip b{text-transform:capitalize}
        .mk{cursor:pointer}
        .pos{stroke:#fff;stroke-width:1.5}

        """

    static let pageScript = #"""
        (function () {
          "use strict";
          var D = JSON.parse(document.getElementById("map-data").textContent);
          var svg = document.getElementById("geotrigger-map");
          var tip = document.getElementById("tip");
          var slider = document.getElementById("time");
          var clock = document.getElementById("clock");
          var play = document.getElementById("play");
          var ns = "http://www.w3.org/2000/svg";
          var marks = Array.prototype.slice.call(svg.querySelectorAll("[data-m]"));
          var paths = [], arrows = [], dots = [];
          var layer = document.createElementNS(ns, "g");
          layer.setAttribute("id", "positions");
          svg.querySelector("#events").before(layer);
          svg.querySelectorAll("path.now").forEach(function (p) { paths[+p.dataset.track] = p; });
          svg.querySelectorAll("g.arrows").forEach(function (g) { arrows[+g.dataset.track] = g.children; });
          D.tracks.forEach(function (tr, k) {
            var c = document.createElementNS(ns, "circle");
            c.setAttribute("r", "5");
            c.setAttribute("class", "pos");
            c.setAttribute("fill", paths[k] ? paths[k].getAttribute("stroke") : "#000");
            layer.appendChild(c);
            dots[k] = c;
          });
          function iso(t) { return new Date(t * 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC"; }
          // The last index of a sorted array at or below v, or -1.
          function below(a, v) {
            var lo = 0, hi = a.length;
            while (lo < hi) { var mid = (lo + hi) >> 1; if (a[mid] <= v) lo = mid + 1; else hi = mid; }
            return lo - 1;
          }
          function show(v) {
            var rel = (D.t1 - D.t0) * v / 1000, t = D.t0 + rel, end = v >= 1000;
            marks.forEach(function (el) { el.style.display = end || D.markers[+el.dataset.m][8] <= rel ? "" : "none"; });
            D.tracks.forEach(function (tr, k) {
              var j = end ? tr.t.length - 1 : below(tr.t, rel), total = tr.l[tr.l.length - 1] || 0;
              var reached = j < 0 ? 0 : tr.l[j];
              if (paths[k]) paths[k].style.strokeDasharray = total > 0 ? (1000 * reached / total) + " 1000" : "";
              if (paths[k]) paths[k].style.display = j < 0 ? "none" : "";
              if (arrows[k]) Array.prototype.forEach.call(arrows[k], function (a) {
                a.style.display = +a.dataset.l <= reached ? "" : "none";
              });
              var dot = dots[k];
              if (j < 0) { dot.style.display = "none"; return; }
              dot.style.display = "";
              dot.setAttribute("cx", tr.x[j]);
              dot.setAttribute("cy", tr.y[j]);
            });
            clock.textContent = D.t1 > D.t0 || D.markers.length ? "up to " + iso(t) : "";
          }
          var pending = false;
          slider.addEventListener("input", function () {
            if (pending) return;
            pending = true;
            requestAnimationFrame(function () { pending = false; show(+slider.value); });
          });
          var timer = null;
          play.addEventListener("click", function () {
            if (timer) { clearInterval(timer); timer = null; play.textContent = "▶"; return; }
            if (+slider.value >= 1000) slider.value = 0;
            play.textContent = "❚❚";
            timer = setInterval(function () {
              var v = Math.min(1000, +slider.value + 4);
              slider.value = v;
              show(v);
              if (v >= 1000) { clearInterval(timer); timer = null; play.textContent = "▶"; }
            }, 50);
          });
          function esc(s) {
            return String(s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; });
          }
          // Marker m's details in the tooltip, its corner at (x, y) in the picture's pixels.
          function showTip(m, x, y) {
            var e = D.markers[m];
            var html = "<b>" + esc(e[0]) + "</b><br>device " + esc(e[1]);
            if (e[2] !== null) html += "<br>region " + esc(e[2]);
            html += "<br>" + esc(e[3]);
            if (e[4] !== null) html += "<br>" + Math.round(e[4]) + " m from the region's centre";
            if (e[5] !== null) html += "<br>request " + esc(e[5]);
            if (e[6] !== null) html += "<br>“" + esc(e[6]) + "”";
            if (e[7] > 1) html += "<br><i>and " + (e[7] - 1) + " more " + esc(e[0]) + " events here</i>";
            tip.innerHTML = html;
            tip.style.display = "block";
            tip.style.left = (x + 14) + "px";
            tip.style.top = (y + 14) + "px";
          }
          svg.addEventListener("mousemove", function (ev) {
            var m = ev.target.dataset ? ev.target.dataset.m : undefined;
            if (m === undefined) { tip.style.display = "none"; return; }
            var box = svg.getBoundingClientRect();
            showTip(+m, ev.clientX - box.left, ev.clientY - box.top);
          });
          svg.addEventListener("mouseleave", function () { tip.style.display = "none"; });
          // "#t=0.25": open at a quarter of the time span (a link to a moment).
          var at = /(?:^#|&)t=([0-9.]+)/.exec(location.hash);
          if (at) slider.value = Math.round(1000 * Math.min(1, Math.max(0, +at[1])));
          show(+slider.value);
          // "#m=12": open with marker 12's details shown (a link to an event).
          var linked = /(?:^#|&)m=([0-9]+)/.exec(location.hash);
          var el = linked && D.markers[+linked[1]] ? svg.querySelector('[data-m="' + linked[1] + '"]') : null;
          if (el) {
            var b = el.getBoundingClientRect(), s = svg.getBoundingClientRect();
            showTip(+linked[1], b.left - s.left + b.width / 2, b.top - s.top + b.height / 2);
          }
        })();

        """#
}
