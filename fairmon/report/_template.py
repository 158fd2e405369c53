"""The report's jinja2 template (kept in a module so it ships with the package without data files)."""

from __future__ import annotations

__all__ = ["TEMPLATE", "INDEX_TEMPLATE", "CSS"]

CSS = """
:root { --ink:#1d2433; --muted:#5c677d; --line:#dde2ea; --bg:#f6f7fb; --card:#fff; --accent:#2e86ab;
        --bad:#d1495b; --warn:#e09f3e; --good:#3f8f5a; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.5 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color:var(--ink); background:var(--bg); }
header { background:#1d2433; color:#fff; padding:18px 32px 14px; }
header h1 { margin:0; font-size:22px; font-weight:600; }
header .sub { color:#c9d1e0; margin-top:2px; }
nav { background:#27304a; padding:6px 32px; position:sticky; top:0; z-index:2; }
nav a { color:#dfe6f3; text-decoration:none; margin-right:18px; font-size:13px; }
nav a:hover { color:#fff; text-decoration:underline; }
main { max-width:1240px; margin:0 auto; padding:18px 32px 40px; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:16px 20px;
          margin:16px 0; }
h2 { margin:0 0 10px; font-size:17px; }
h3 { margin:14px 0 6px; font-size:14px; color:var(--muted); text-transform:uppercase; letter-spacing:.04em; }
.badge { display:inline-block; padding:2px 10px; border-radius:12px; font-weight:600; font-size:13px;
         color:#fff; vertical-align:middle; }
.st-drift, .st-failed, .st-data_invalid, .sev-critical { background:var(--bad); }
.st-watch, .sev-warning, .st-labels_pending { background:var(--warn); }
.st-ok, .st-succeeded, .sev-info { background:var(--good); }
.st-running, .st-skipped { background:var(--muted); }
.cards { display:grid; grid-template-columns:repeat(auto-fill, minmax(165px, 1fr)); gap:10px; }
.card { border:1px solid var(--line); border-radius:6px; padding:8px 12px; background:#fbfcfe; }
.card .k { color:var(--muted); font-size:12px; }
.card .v { font-size:20px; font-weight:600; }
.card .d { color:var(--muted); font-size:12px; }
table { border-collapse:collapse; width:100%; margin:6px 0 10px; font-size:13px; }
th, td { text-align:left; padding:5px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#f0f3f8; font-weight:600; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
tr.current td { background:#eaf4fa; font-weight:600; }
tr.selected td { background:#fdecee; }
.muted { color:var(--muted); }
.rule { font-family:ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background:#fdecee;
        border-left:4px solid var(--bad); padding:6px 10px; margin:4px 0; border-radius:3px; }
.fig { text-align:center; margin:8px 0; }
.fig img { max-width:100%; height:auto; border:1px solid var(--line); border-radius:4px; background:#fff; }
.fig.scroll { overflow-x:auto; }
.fig.scroll img { max-width:none; }
.ci { font-size:11px; }
.two { display:grid; grid-template-columns:minmax(0, 1fr) minmax(0, 1fr); gap:18px; align-items:start; }
.error { background:#fdecee; border:1px solid var(--bad); padding:8px 12px; border-radius:6px; }
details.alert { margin:4px 0; }
details.alert summary { cursor:pointer; padding:3px 0; }
pre.alert { white-space:pre-wrap; background:#f4f5f7; border-left:4px solid #4a154b; padding:8px 10px;
            font-size:12px; margin:4px 0; }
footer { color:var(--muted); font-size:12px; text-align:center; padding:10px; }
code { background:#f0f3f8; padding:1px 4px; border-radius:3px; }
@media (max-width: 900px) { .two { grid-template-columns:1fr; } }
"""

_HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<meta name="generator" content="fairmon">
"""

TEMPLATE = (
    _HEAD
    + """<title>fairmon · {{ monitor }} · {{ window_day }}</title>
<style>{{ css }}</style>
</head>
<body>
<header>
  <h1>{{ monitor }} <span class="badge st-{{ status }}">{{ status }}</span></h1>
  <div class="sub">window {{ window_start }} → {{ window_end }} · model {{ model_version }} · {{ n_rows }} rows</div>
</header>
<nav>{% for id, title in sections %}<a href="#{{ id }}">{{ title }}</a>{% endfor %}</nav>
<main>

<section id="summary">
  <h2>Summary</h2>
  {% if error %}<p class="error"><b>Run {{ run_status }}:</b> {{ error }}</p>{% endif %}
  {% if chart_errors %}<p class="error"><b>Some pictures could not be drawn</b> (the tables are complete):
    {{ chart_errors | join("; ") }}</p>{% endif %}
  <div class="cards">
    <div class="card"><div class="k">status</div><div class="v">{{ status }}</div>
      <div class="d">{{ n_active }} active of {{ n_findings }} finding(s); run {{ run_status }}</div></div>
    <div class="card"><div class="k">model version</div><div class="v">{{ model_version }}</div>
      <div class="d">{{ n_rows }} rows · favorable rate {{ favorable_rate }}</div></div>
    {% if headline.dp_difference %}
    <div class="card"><div class="k">largest DP difference</div><div class="v">{{ headline.dp_difference.value }}</div>
      <div class="d">{{ headline.dp_difference.attribute }} {{ headline.dp_difference.ci }}</div></div>
    {% endif %}
    {% if headline.dp_ratio %}
    <div class="card"><div class="k">lowest DP ratio</div><div class="v">{{ headline.dp_ratio.value }}</div>
      <div class="d">{{ headline.dp_ratio.attribute }} {{ headline.dp_ratio.ci }}</div></div>
    {% endif %}
    {% if evidence %}
    <div class="card"><div class="k">RUMIE DScore (held-out)</div><div class="v">{{ evidence.honest }}</div>
      <div class="d">p {{ evidence.p_value }} · group {{ evidence.fraction }} of rows</div></div>
    {% endif %}
    {% for gesd in gesd_list %}
    <div class="card"><div class="k">GESD{% if gesd.attribute %} ({{ gesd.attribute }}){% endif %}</div>
      <div class="v">{{ gesd.value }}</div><div class="d">Mann–Whitney p {{ gesd.p_value }}{% if gesd.noise_floor %}; noise floor {{ gesd.noise_floor }}{% if gesd.within_noise %} (within noise){% endif %}{% endif %}</div></div>
    {% endfor %}
  </div>
  {% if evidence and evidence.rules %}
  <h3>Most discriminated group</h3>
  {% for r in evidence.rules[:3] %}<div class="rule">{{ r }}</div>{% endfor %}
  {% if evidence.rules | length > 3 %}<p class="muted">… and {{ evidence.rules | length - 3 }} more rule(s): see
     <a href="#rumie">the RUMIE section</a>.</p>{% endif %}
  <p class="muted">P(favorable) {{ evidence.p_fav_in }} inside the group vs {{ evidence.p_fav_out }} outside.</p>
  {% endif %}
</section>

<section id="findings">
  <h2>Drift findings</h2>
  {% if findings %}
  <table>
    <tr><th>severity</th><th>status</th><th>what</th><th class="num">value</th><th>CI</th>
        <th class="num">baseline</th><th>since</th><th>detail</th></tr>
    {% for f in findings %}
    <tr><td><span class="badge sev-{{ f.severity }}">{{ f.severity }}</span></td><td>{{ f.status }}</td>
        <td>{{ f.what }}</td><td class="num">{{ f.value }}</td><td>{{ f.ci }}</td>
        <td class="num">{{ f.baseline }}</td><td>{{ f.since }}</td><td class="muted">{{ f.message }}</td></tr>
    {% endfor %}
  </table>
  {% else %}
  <p class="muted">No drift finding at this window: every check passed against the earlier completed windows.</p>
  {% endif %}
  {% if alerts %}
  <h3>Slack messages of this window (click to expand)</h3>
  {% for a in alerts %}
  <details class="alert"><summary><span class="badge sev-{{ a.severity or "info" }}">{{ a.severity or "info" }}</span>
    {{ a.first_line }} <span class="muted">· {{ a.kind }} · {{ a.state }}{% if a.channel %} · {{ a.channel }}{% endif %}</span></summary>
  <pre class="alert">{{ a.text }}</pre></details>
  {% endfor %}
  {% endif %}
</section>

<section id="outcome">
  <h2>Outcome fairness</h2>
  {% if outcome_img %}
  <div class="fig"><img src="{{ outcome_img }}" alt="per-group rates with confidence intervals"></div>
  {% endif %}
  {% if disparities or group_rows %}
  <h3>Disparities</h3>
  <table><tr><th>metric</th><th>attribute</th><th class="num">value</th><th>CI</th><th class="num">n</th>
      {% if range_rules %}<th>allowed · judged on</th>{% endif %}</tr>
  {% for r in disparities %}
  <tr><td>{{ r.metric }}</td><td>{{ r.attribute }}</td><td class="num">{{ r.value }}</td><td>{{ r.ci }}</td>
      <td class="num">{{ r.n }}</td>{% if range_rules %}<td>{{ r.allowed }}</td>{% endif %}</tr>
  {% endfor %}
  </table>
  {% if range_rules %}
  <p class="muted range-rules">Allowed ranges (drift.allowed_ranges):
    {% for r in range_rules %}{{ r.metric }} {{ r.range }}, {{ r.rule }}{% if not loop.last %}; {% endif %}{% endfor %}.</p>
  {% endif %}
  <h3>Per group</h3>
  <table><tr><th>group</th>{% for c in group_table.cols %}<th class="num">{{ c }}</th>{% endfor %}<th class="num">n</th></tr>
  {% for r in group_table.rows %}
  <tr><td>{{ r.group }}</td>
    {% for c in r.cells %}<td class="num">{% if c.missing %}<span class="muted">n/a</span>{% else %}{{ c.value }}
      <span class="muted ci">{{ c.ci }}</span>{% endif %}</td>{% endfor %}
    <td class="num">{{ r.n }}</td></tr>
  {% endfor %}
  </table>
  <p class="muted">Value and confidence interval per group; n/a: group below the minimum size, or labels not
     available yet.</p>
  {% else %}
  <p class="muted">Not available for this window (outcome metrics disabled or the run has no results).</p>
  {% endif %}
</section>

<section id="rumie">
  <h2>Discriminated group (RUMIE)</h2>
  {% if evidence %}
  {% if evidence.status != "ok" %}<p class="error">{{ evidence.status }}: {{ evidence.reason }}</p>
  <p class="muted">No group was measured in this window: no DScore, p-value or group size to show.</p>{% else %}
  <div class="cards">
    <div class="card"><div class="k">DScore held-out</div><div class="v">{{ evidence.honest }}</div>
      <div class="d">p-value {{ evidence.p_value }}</div></div>
    <div class="card"><div class="k">DScore in-sample</div><div class="v">{{ evidence.dscore }}</div>
      <div class="d">{{ evidence.method }}</div></div>
    <div class="card"><div class="k">group size</div><div class="v">{{ evidence.group_size }}</div>
      <div class="d">{{ evidence.fraction }} of {{ evidence.n }} rows</div></div>
    <div class="card"><div class="k">P(favorable) in / out</div><div class="v">{{ evidence.p_fav_in }} / {{ evidence.p_fav_out }}</div>
      <div class="d">{% if evidence.overlap %}overlap with previous group {{ evidence.overlap }}{% endif %}</div></div>
  </div>{% endif %}
  <h3>Key attributes</h3>
  <p>{{ evidence.key_attributes | join(", ") or "none" }}
  {% if evidence.key_features %}<span class="muted"> — {% for k in evidence.key_features %}{{ k.encoded }} (θ {{ k.weight }}){% if not loop.last %}, {% endif %}{% endfor %}</span>{% endif %}</p>
  <h3>Decision tree (IE-DT){% if evidence.tree_leaves %} · {{ evidence.tree_leaves }} leaves{% endif %}</h3>
  {% if evidence.tree_img %}
  <div class="fig scroll"><img src="{{ evidence.tree_img }}" alt="RUMIE decision tree with leaf sizes and P(fav)"></div>
  {% if evidence.tree_note %}<p class="muted tree-note">{{ evidence.tree_note }}</p>{% endif %}
  {% else %}<p class="muted">No decision-tree picture for this window (method {{ evidence.method }}: a tree is stored by IE-DT only); the rules below describe the group.</p>{% endif %}
  <h3>Rules (group = any of)</h3>
  {% for r in evidence.rules %}<div class="rule">{{ r }}</div>{% else %}<p class="muted">no rules</p>{% endfor %}
  {% else %}
  <p class="muted">Not available for this window (RUMIE disabled or the run has no results).</p>
  {% endif %}
</section>

<section id="diagnosis">
  <h2>Why disfavored · model or data?</h2>
  {% for g in diagnosis.gaps %}
  <h3>{{ g.title }}</h3>
  {% if g.status != "ok" %}<p class="muted">{{ g.status }}{% if g.reason %}: {{ g.reason }}{% endif %}</p>{% else %}
  <p class="muted">Mean attribution of P(favorable) per feature inside the group minus outside it
     ({{ g.explainer }}; {{ g.sizes }}; P(favorable) inside / outside {{ g.rates }}; {{ g.interval }}).
     Negative: the feature lowers P(favorable) more for the group's members.</p>
  {% if g.img %}<div class="fig"><img src="{{ g.img }}" alt="attribution gap per feature"></div>{% endif %}
  <table><tr><th>feature</th><th>inside</th><th>outside</th><th>difference</th><th>interval</th><th></th></tr>
  {% for f in g.rows %}<tr><td>{{ f.feature }}</td><td class="num">{{ f.inside }}</td><td class="num">{{ f.outside }}</td>
    <td class="num">{{ f.difference }}</td><td class="num">{{ f.ci }}</td><td>{{ f.sentence }}</td></tr>{% endfor %}
  </table>
  {% endif %}
  {% else %}<p class="muted">No attribution gap for this window (explanations or attribution gaps disabled, no RUMIE
     group and no declared group, or the run has no results).</p>{% endfor %}
  <h3>Model or data?</h3>
  {% if diagnosis.rescores %}
  <table><tr><th>series</th><th>versions</th><th>current</th><th>earlier version</th><th>fired</th><th>baseline</th><th>verdict</th></tr>
  {% for r in diagnosis.rescores %}<tr><td>{{ r.series }} <span class="muted">({{ r.kind }})</span></td><td>{{ r.versions }}</td>
    <td class="num">{{ r.value_new }} {{ r.ci_new }}</td><td class="num">{{ r.value_old }} {{ r.ci_old }}</td>
    <td class="num">{{ r.value_fired }}</td><td class="num">{{ r.baseline }}</td>
    <td>{% if r.status == "ok" %}<b>{{ r.verdict }}</b>{% else %}<span class="muted">{{ r.status }}: {{ r.reason }}</span>{% endif %}</td></tr>
  {% if r.sentence %}<tr><td colspan="7" class="muted">{{ r.sentence }} — {{ r.definition }}</td></tr>{% endif %}{% endfor %}
  </table>
  <p class="muted">Verdict <b>model</b>: the earlier version's value lies outside the current value's interval and closer to
     the baseline; <b>data</b>: inside it (the same within noise), or no closer to the baseline.</p>
  {% else %}<p class="muted">Not rescored: no finding fired, or the registry holds no earlier production version.</p>{% endif %}
</section>

<section id="gesd">
  <h2>Explanation fairness (GESD)</h2>
  {% for gesd in gesd_list %}
  <p>GESD <b>{{ gesd.value }}</b> across <b>{{ gesd.attribute or "the protected groups" }}</b>
     (explainer {{ gesd.explainer }}; Mann–Whitney p {{ gesd.p_value }}{% if gesd.status and gesd.status != "ok" %}; {{ gesd.status }}{% endif %}).
     {% if gesd.noise_floor %}Noise floor {{ gesd.noise_floor }}: the 95th percentile of GESD when the group labels of the sampled rows are permuted{% if gesd.within_noise %} — this value is within noise{% endif %}.{% endif %}
     Higher stability means explanations change less under small perturbations; GESD is the gap between groups.</p>
  <div class="two">
    <div>{% if gesd.img %}<div class="fig"><img src="{{ gesd.img }}" alt="per-group explanation stability"></div>{% endif %}
      <p class="muted">{% if gesd.distribution %}Distribution of per-instance stabilities S(x); bars mark group means.{% else %}Group mean stability ±1 std (per-instance values not stored).{% endif %}</p></div>
    <div>
      <table><tr><th>group</th><th class="num">stability</th><th class="num">std</th><th class="num">n</th></tr>
      {% for g in gesd.groups %}<tr><td>{{ g.label }}</td><td class="num">{{ g.stability }}</td><td class="num">{{ g.std }}</td><td class="num">{{ g.n }}</td></tr>{% endfor %}
      </table>
      {% if gesd.components %}
      <table><tr><th>component</th><th class="num">GESD</th><th class="num">p</th></tr>
      {% for c in gesd.components %}<tr><td>{{ c.name }}</td><td class="num">{{ c.value }}</td><td class="num">{{ c.p_value }}</td></tr>{% endfor %}
      </table>
      {% endif %}
      {% if gesd.pairwise %}
      <table><tr><th>pair</th><th class="num">p (Holm)</th></tr>
      {% for t in gesd.pairwise %}<tr><td>{{ t.a }} vs {{ t.b }}</td><td class="num">{{ t.p }}</td></tr>{% endfor %}
      </table>
      {% endif %}
    </div>
  </div>
  {% else %}
  <p class="muted">Not available for this window (GESD disabled or the run has no results).</p>
  {% endfor %}
</section>

<section id="openxai">
  <h2>Explanation quality (OpenXAI)</h2>
  {% if openxai %}
  <table>
    <tr><th>explainer</th><th>metric</th><th class="num">all rows</th>
      {% for g in openxai.group_cols %}<th class="num">{{ g }}<br><span class="muted">{{ openxai.sizes[loop.index0] }}</span></th>{% endfor %}
      {% for a in openxai.fair_cols %}<th class="num">gap {{ a }}</th>{% endfor %}</tr>
    {% for r in openxai.rows %}
    <tr><td>{{ r.explainer }}</td><td>{{ r.metric }}</td><td class="num">{{ r.all }}</td>
      {% for v in r.groups %}<td class="num">{{ v }}</td>{% endfor %}
      {% for v in r.gaps %}<td class="num"><b>{{ v }}</b></td>{% endfor %}</tr>
    {% endfor %}
  </table>
  {% for u in openxai.undefined %}<p class="muted openxai-undefined">{{ u }}</p>{% endfor %}
  <p class="muted">PGI/PGU: prediction gap when the top-k / other features are perturbed (higher PGI, lower PGU
     = more faithful). RIS/RRS/ROS: relative instability (lower = more stable). "gap": |majority − minority|
     group mean (range for more than two groups).</p>
  {% if openxai.stability %}
  <p class="muted openxai-scale">Scale of RIS/RRS/ROS: each is, per row, the largest ratio of the explanation's
     relative change to the relative change of the input (RIS), the first hidden layer (RRS) or the class
     logits (ROS), over tiny perturbations (std 1e-5) that keep the predicted class; the table shows its mean.
     1 means the explanation moves as much as what it is compared with. The perturbations change the input
     by about 1e-5 relative, so an explanation change that does not shrink with them (an explainer's own
     sampling, a tree model's step) is multiplied by about 10<sup>5</sup>: RIS values of
     10<sup>4</sup>–10<sup>5</sup> are common for sampling explainers (LIME, KernelSHAP) and tree models
     and are not by themselves a fault. Compare a value with the same metric and explainer in earlier
     windows, not across metrics, explainers or models. RRS is undefined for models without internal
     representations (scikit-learn).</p>
  {% endif %}
  {% else %}
  <p class="muted">Not available for this window (OpenXAI metrics disabled or the run has no results).</p>
  {% endif %}
</section>

<section id="trends">
  <h2>Trends</h2>
  {% if trend_img %}
  <div class="fig"><img src="{{ trend_img }}" alt="key metrics across windows"></div>
  <p class="muted">{{ n_trend }} window(s) from the store up to this one. Shaded column: this window; red lines:
     windows with an active drift finding; dashed lines: model version changes; dotted lines: spec changes. The DP
     panels draw each declared attribute and the intersection with the largest DP difference in this window.</p>
  <table><tr><th>window</th><th>status</th><th>model</th><th class="num">max DP difference</th>
    <th class="num">DScore held-out</th><th class="num">max GESD</th><th>drift</th></tr>
  {% for r in trend_rows %}
  <tr{% if r.current %} class="current"{% endif %}><td>{{ r.window }}</td><td>{{ r.status }}</td><td>{{ r.model }}</td>
    <td class="num">{{ r.dp }}</td><td class="num">{{ r.honest }}</td><td class="num">{{ r.gesd }}</td>
    <td>{% if r.drift %}<span class="badge st-drift">drift</span>{% endif %}</td></tr>
  {% endfor %}
  </table>
  {% else %}
  <p class="muted">No history yet.</p>
  {% endif %}
</section>

<section id="feu">
  <h2>Retraining candidates (FEU)</h2>
  {% if feu_target %}<p class="muted">{{ feu_target }}</p>{% endif %}
  {% if feu_rows %}
  <div class="two">
    <div>{% if feu_img %}<div class="fig"><img src="{{ feu_img }}" alt="FEU Pareto front"></div>{% endif %}</div>
    <div>
      <table><tr><th>#</th><th>hyperparameters</th><th class="num">bal. acc.</th><th class="num">positive rate</th>
        <th class="num">AUC</th><th class="num">F1</th><th class="num">DP</th><th class="num">EOD</th><th class="num">GESD</th></tr>
      {% for c in feu_rows %}
      <tr{% if c.selected %} class="selected"{% endif %}><td>{{ c.index }}{% if c.selected %} ★{% endif %}</td>
        <td>{{ c.hyper }}{% if c.note %}<br><span class="muted">{{ c.note }}</span>{% endif %}</td><td class="num">{{ c.balanced_accuracy }}</td><td class="num">{{ c.selection_rate }}</td>
        <td class="num">{{ c.auc }}</td><td class="num">{{ c.f1 }}</td>
        <td class="num">{{ c.dp }}</td><td class="num">{{ c.eod }}</td><td class="num">{{ c.gesd }}</td></tr>
      {% endfor %}
      {% if feu_baselines %}<tr><th colspan="9">compared with (same split and seed)</th></tr>{% endif %}
      {% for b in feu_baselines %}
      <tr><td colspan="2">{{ b.name }}{% if b.note %} <span class="muted">({{ b.note }})</span>{% endif %}</td>
        <td class="num">{{ b.balanced_accuracy }}</td><td class="num">{{ b.selection_rate }}</td>
        <td class="num">{{ b.auc }}</td><td class="num">{{ b.f1 }}</td>
        <td class="num">{{ b.dp }}</td><td class="num">{{ b.eod }}</td><td class="num">{{ b.gesd }}</td></tr>
      {% endfor %}
      </table>
      <p class="muted">NSGA-II Pareto set trading utility (balanced accuracy by default, AUC in paper mode)
         against DP difference and GESD (test split); ★ = the recommended candidate (default: the lowest DP
         among feasible candidates whose DP gain beats its bootstrap noise, judged on out-of-fold rows below
         retraining.cv_below_rows validation rows, else on validation; paper mode: Chebyshev
         scalarisation). Candidates are proposed, never deployed: production changes only when someone
         promotes the registered version.</p>
    </div>
  </div>
  {% else %}
  <p class="muted">No retraining candidates for this window: FEU runs at the window where a drift opens
     (with <code>retraining.trigger: on_drift</code>, the default; not again while it stays open) or on
     request (<code>fairmon feu</code>).{% if feu_latest %} The latest earlier candidates (among the
     {{ n_trend }} windows of the trends below) are in the report of <a href="{{ feu_latest.href }}">{{ feu_latest.day }}</a>.{% endif %}</p>
  {% endif %}
</section>

</main>
<footer>fairmon run {{ run_id }} · spec {{ spec_fingerprint }} · stored {{ updated_at }}{% if timings %} · {{ timings }}{% endif %}
{% if rebuild_command %}<br>rebuild: <code>{{ rebuild_command }}</code> (against the store it was built from:
  <code>--db URL</code> or <code>FAIRMON_DATABASE_URL</code>){% endif %}</footer>
</body>
</html>
"""
)

INDEX_TEMPLATE = (
    _HEAD
    + """<title>fairmon · {{ monitor }} · reports</title>
<style>{{ css }}</style>
</head>
<body>
<header><h1>{{ monitor }}</h1><div class="sub">run reports, newest first</div></header>
<main>
<section id="index">
  <table><tr><th>window</th><th>status</th><th>model</th><th>report</th></tr>
  {% for r in rows %}
  <tr><td>{{ r.window }}</td><td><span class="badge st-{{ r.status }}">{{ r.status }}</span></td><td>{{ r.model }}</td>
      <td>{% if r.href %}<a href="{{ r.href }}">{{ r.href }}</a>{% else %}<span class="muted">not written</span>{% endif %}</td></tr>
  {% endfor %}
  </table>
</section>
</main>
</body>
</html>
"""
)
