#include "report/html_style.h"

namespace attnv::report::detail {

// System fonts only: the page must not fetch anything.
const char* const kPageCss = R"css(
:root{--ok:#2e9e5b;--bad:#d62728;--nc:#9aa3ad;--ink:#1d2733;--muted:#5b6775;--line:#e3e7ec;--bg:#f5f7fa;
--card:#fff;--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,
"DejaVu Sans",sans-serif}
header.hero{padding:28px 40px 24px;color:#fff;background:linear-gradient(120deg,#0f5132,#2e9e5b)}
header.hero.bad{background:linear-gradient(120deg,#6b1414,#c62828)}
header.hero.none{background:linear-gradient(120deg,#3b4550,#6b7785)}
.badge{display:inline-block;font-weight:800;letter-spacing:.08em;font-size:13px;padding:4px 10px;
border:2px solid rgba(255,255,255,.85);border-radius:4px}
header h1{margin:10px 0 4px;font-size:28px;font-weight:700}
header h1 .ver{font-weight:400;opacity:.8;font-size:20px}
header .line{margin:0 0 14px;font-size:16px;opacity:.95}
header dl{display:flex;flex-wrap:wrap;gap:6px 28px;margin:0;font-size:13px}
header dt{opacity:.7;margin:0}header dd{margin:0;font-family:var(--mono);overflow-wrap:anywhere}
header dl div{display:flex;gap:8px}
main{padding:8px 40px 40px;max-width:1400px}
section{margin-top:26px}
h2{font-size:18px;margin:0 0 10px;font-weight:650}
h2 small{font-weight:400;color:var(--muted);font-size:13px;margin-left:8px}
.cards{display:flex;flex-wrap:wrap;gap:14px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 18px;min-width:130px}
.card .n{font-size:26px;font-weight:700}.card .l{color:var(--muted);font-size:12px;text-transform:uppercase;
letter-spacing:.05em}
.card.ok .n{color:var(--ok)}.card.bad .n{color:var(--bad)}.card.nc .n{color:var(--nc)}
.card .sub{font-size:12px;color:var(--muted);font-family:var(--mono);max-width:420px;overflow-wrap:anywhere}
table{border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:8px}
th,td{padding:6px 10px;text-align:left;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);font-weight:600}
table.grid td.v{text-align:center;font-weight:700;font-size:12px;min-width:96px;border-left:2px solid var(--bg);
cursor:default}
td.v small{display:block;font-weight:400;font-size:11px;opacity:.85}
td.pass{background:#e3f4ea;color:#17693a}td.fail{background:var(--bad);color:#fff}
td.nc{background:#eef0f3;color:#8a939d}td.ne{background:#fff4d6;color:#8a6100}.card.ne .n{color:#b07d00}td.note{background:#dff3f7;color:#0b6170}.card.note .n{color:#0b7d91}td.aerr{background:#f6e3f7;color:#7a1f80}td.ns{background:#fde7c8;color:#8a4b00}.card.ns .n{color:#a35a00}.card.aerr .n{color:#8e2494}td.none{background:#fafbfc}
td.id{font-weight:700;white-space:nowrap}td.prop{font-family:var(--mono);font-size:12px;color:var(--muted)}
code,.mono{font-family:var(--mono);font-size:12px}
pre.cmd{margin:6px 0 0;padding:8px 10px;background:#1d2733;color:#e8edf2;border-radius:6px;white-space:pre-wrap;
overflow-wrap:anywhere;font:12px/1.4 var(--mono)}
.finding{background:var(--card);border:1px solid var(--line);border-left:5px solid var(--bad);border-radius:8px;
padding:12px 16px;margin-bottom:12px}
.finding h3{margin:0 0 6px;font-size:15px}.finding h3 .tag{color:var(--bad);margin-right:6px}
.finding dl{display:grid;grid-template-columns:90px 1fr;gap:3px 10px;margin:0}
.finding dt{color:var(--muted);font-size:12px}.finding dd{margin:0;overflow-wrap:anywhere;white-space:pre-wrap}
.charts{display:flex;flex-wrap:wrap;gap:16px}
.chart{background:var(--card);border:1px solid var(--line);border-radius:8px}
svg.hist{width:560px;max-width:100%}svg.scatter{width:440px;max-width:100%}
svg text{font-family:system-ui,"DejaVu Sans",sans-serif;fill:#3a4552}
svg .ctitle{font-size:13px;font-weight:650;fill:var(--ink)}svg .tick{font-size:10px;fill:#5b6775}
svg .axislabel{font-size:11px;fill:#5b6775}svg .empty{font-size:12px;fill:#8a939d}
svg .grid{stroke:#edf0f3;stroke-width:1}svg .axis{stroke:#8a939d;stroke-width:1}
svg .over{fill:#fdecec}svg .bound{stroke:var(--bad);stroke-width:1.5;stroke-dasharray:4 3}
svg .boundlabel{font-size:10px;fill:var(--bad);font-weight:650}
svg .plotbg{fill:#fbfcfd;stroke:#e3e7ec}svg .diag{stroke:#b9c1ca;stroke-dasharray:3 3}
svg circle{stroke:rgba(255,255,255,.7);stroke-width:.6;fill-opacity:.85}
svg circle.failpt{stroke:#4a0d0d;stroke-width:1.2;fill-opacity:1}
body:not([data-color=verdict]) .by-verdict{display:none}body[data-color=verdict] .by-ratio{display:none}
svg circle.cell{fill:var(--r)}body[data-color=verdict] svg circle.cell{fill:var(--v)}
.toggle{margin:0 0 10px}.toggle button{font:inherit;font-size:12px;padding:4px 10px;border:1px solid var(--line);
background:var(--card);cursor:pointer}.toggle button:first-child{border-radius:4px 0 0 4px}
.toggle button:last-child{border-radius:0 4px 4px 0}.toggle button.on{background:var(--ink);color:#fff}
.legend{display:flex;align-items:center;gap:8px;font-size:12px;color:var(--muted);margin:0 0 8px}
.scale{width:180px;height:10px;border-radius:2px;background:linear-gradient(90deg,#440154,#3b528b,#21918c,#5ec962,
#fde725)}.sw{display:inline-block;width:10px;height:10px;border-radius:50%;vertical-align:middle}
.bar{display:inline-block;height:8px;border-radius:2px;vertical-align:middle;margin-right:6px}
table.worst td{font-size:13px}code.cmdline{display:block;margin-top:4px;padding:3px 8px;background:#eef1f4;
border-radius:4px;color:#2b3642;font-size:11px;white-space:pre-wrap;overflow-wrap:anywhere}table.worst td.r{font-family:var(--mono);white-space:nowrap}
.chips span{display:inline-block;font-size:12px;padding:2px 8px;border-radius:10px;margin:0 4px 4px 0;
background:#e3f4ea;color:#17693a}.chips span.no{background:#eef0f3;color:#8a939d;text-decoration:line-through}
ul.notes{margin:8px 0 0;padding-left:18px;color:#7a4b00}
footer{padding:0 40px 40px;color:var(--muted);font-size:12px}
.muted{color:var(--muted)}
)css";

// Runs without the network and without errors; the last statement tells a headless browser test
// that everything before it ran.
const char* const kPageScript = R"js(
(function () {
  var body = document.body;
  var buttons = document.querySelectorAll('.toggle button');
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].addEventListener('click', function (ev) {
      body.dataset.color = ev.currentTarget.dataset.mode;
      for (var j = 0; j < buttons.length; j++)
        buttons[j].classList.toggle('on', buttons[j].dataset.mode === body.dataset.color);
    });
  }
  body.dataset.ready = "1";
})();
)js";

}  // namespace attnv::report::detail
