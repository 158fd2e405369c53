"""Explanation cost per setting and a first run with every default (issue 21, "Defaults").

Setting: a newcomer's own model — a raw-column scikit-learn Pipeline (StandardScaler + OneHotEncoder
+ HistGradientBoosting) on 25 synthetic credit inputs (``tests/cli/own_model_setup.py``), registered
with ``fairmon model register``, and a 2,000-row daily window.

Rows of the results table:

* ``seconds per model row`` — :func:`fairmon.explain.cost.seconds_per_evaluation` (median of three
  timed ``predict_proba`` batches of 2,048 rows; the cost model's price), median of 3 such;
* ``kernelshap K x B`` / ``lime L`` — CPU seconds to explain one row, measured on a few rows through
  :func:`fairmon.explain.explain`, beside the cost model's prediction for it;
* ``attribution gap ...`` — the diagnose step's "why disfavored" for one group (``sex=F``) at the
  current defaults (:func:`fairmon.explain.attribution_gap.attribution_gap`: one batched KernelSHAP
  call over ``s`` rows inside and ``s`` outside, then the bootstrap), measured CPU seconds beside the
  cost model's part for one group;
* ``rescore ...`` — the diagnose step's model-or-data rescoring of one fired outcome series: the
  earlier version's ``predict_proba`` on every window row and the metric's bootstrap under both
  versions (:func:`fairmon.fairness.rescore.rescore_outcome`), beside the cost model's one model row
  per window row;
* ``window parts at <settings>`` — the cost model's CPU seconds of each part of the explanation and
  diagnose steps (GESD per attribute, OpenXAI per explainer, attribution gaps of two groups, the
  rescoring), from the measured price per row, for the previous defaults and the current ones;
* ``fairmon run, minimal spec`` — the real command (a spec with only the required sections) on the
  window: wall and CPU seconds (the child process), and the step's status (``--run`` only; needs the
  machine's PostgreSQL).

``--model torch``: fairmon's own 64-32 MLP (``fairmon.registry.build_mlp``) trained on the encoded
reference rows, registered with ``--builder``, instead of the pipeline. Results go to
``results/explain_cost_<model>.{md,csv,json}`` with the machine's load.

Usage::

    python benchmarks/explain_cost/run.py --smoke --out /tmp/x          # seconds (CI)
    nice python benchmarks/explain_cost/run.py --run                     # full run -> results/
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))  # repo root: benchmarks._meta and fairmon
sys.path.insert(0, str(ROOT / "tests" / "cli"))  # own_model_setup: the synthetic credit data

import joblib  # noqa: E402
import numpy as np  # noqa: E402
import own_model_setup as credit  # noqa: E402

from benchmarks._meta import write_results  # noqa: E402
from fairmon.config import ExplanationsSpec, GesdSpec, OpenXAISpec  # noqa: E402
from fairmon.explain import explain  # noqa: E402
from fairmon.explain.cost import estimate, seconds_per_evaluation  # noqa: E402
from fairmon.registry import Registry  # noqa: E402

BIN = Path(sys.executable).parent
#: the spec defaults before issue 21
PREVIOUS = ExplanationsSpec(background_size=100, lime_samples=1000, kernelshap_samples=512,
                            gesd=GesdSpec(sample_size=100, n_perturbations=10),
                            openxai=OpenXAISpec(sample_size=200, n_perturbations=100))

#: the minimal spec, with the artifacts in the benchmark's folder
MINIMAL_SPEC = credit.MINIMAL_SPEC + "execution:\n  artifact_location: artifacts\n"


def _cpu(fn: Any) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def _torch_file(folder: Path, reference: Any) -> list[str]:
    """fairmon's 64-32 MLP trained on the encoded reference rows, saved as a state_dict; the
    registration arguments naming its builder."""
    import torch

    from fairmon.registry import build_mlp
    from fairmon.schema import FeatureSchema

    schema = FeatureSchema.fit(reference, columns=credit.WIDE_FEATURES)
    torch.manual_seed(0)
    net = build_mlp(schema.n_encoded)
    X = torch.tensor(schema.transform(reference), dtype=torch.float32)
    y = torch.tensor(reference[credit.LABEL].to_numpy(), dtype=torch.float32)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    for _ in range(200):
        opt.zero_grad()
        torch.nn.functional.binary_cross_entropy_with_logits(net(X).reshape(-1), y).backward()
        opt.step()
    torch.save(net.eval().state_dict(), folder / "model.pt")
    return ["model.pt", "--builder", "fairmon.registry:build_mlp", "--builder-kwargs",
            json.dumps({"n_inputs": schema.n_encoded}), "--tolerance", "0.01"]


def setup(folder: Path, rows: int, kind: str) -> Any:
    reference = credit.wide_applications(2000, seed=1)
    reference.to_csv(folder / "reference.csv", index=False)
    if kind == "torch":
        args = _torch_file(folder, reference)
    else:
        joblib.dump(credit.hgb_pipeline(reference), folder / "model.joblib")
        args = ["model.joblib"]
    (folder / "data").mkdir()
    credit.wide_applications(rows, seed=100).to_csv(folder / "data" / "2026-01-01.csv", index=False)
    subprocess.run([str(BIN / "fairmon"), "model", "register", *args, "--name", "credit", "--reference",
                    "reference.csv", "--label", "approved", "--features", *credit.WIDE_FEATURES],
                   cwd=folder, check=True, capture_output=True)
    (folder / "monitors").mkdir()
    (folder / "monitors" / "credit.yaml").write_text(
        MINIMAL_SPEC.format(features=list(credit.WIDE_FEATURES)).replace("registry_uri: registry", "registry_uri: ../registry")
        .replace('"data/', '"../data/').replace("artifact_location: artifacts", "artifact_location: ../artifacts"))
    return Registry(str(folder / "registry")).load("credit")


def units(model: Any, Z: np.ndarray, smoke: bool) -> list[dict[str, Any]]:
    price = float(np.median([seconds_per_evaluation(model, Z) for _ in range(3)]))
    out: list[dict[str, Any]] = [{"row": "seconds per model row", "cpu_s": price, "predicted_s": price}]
    bg = Z[:100]
    cases = [("kernelshap", 512, 100, 1), ("kernelshap", 128, 30, 4), ("kernelshap", 64, 20, 8), ("lime", 1000, 0, 20),
             ("lime", 300, 0, 40)]
    for method, n, b, rows in cases[3:] if smoke else cases:
        rows = max(1, rows // 4) if smoke else rows
        params = {"n_samples": n}
        background = bg[: b or 100]
        cpu = _cpu(lambda: explain(model, Z[100 : 100 + rows], method=method, background=background,  # noqa: B023
                                   random_state=0, device="cpu", **params))  # noqa: B023
        per_row = (n * b) if method == "kernelshap" else n
        label = f"{method} {n} x {b}" if b else f"{method} {n}"
        out.append({"row": f"{label} (per explained row, {rows} rows)", "cpu_s": cpu / rows, "predicted_s": per_row * price})
    return out


def diagnose(model: Any, window: Any, reference: Any, price: float, smoke: bool) -> list[dict[str, Any]]:
    """The diagnose step's two parts, measured at the current defaults (smoke: small sizes)."""
    from fairmon.explain.attribution_gap import attribution_gap
    from fairmon.fairness.rescore import rescore_outcome

    e = ExplanationsSpec()
    g = e.attribution_gap
    s, k = (20, 32) if smoke else (g.sample_size, e.kernelshap_samples)
    features = list(credit.WIDE_FEATURES)
    mask = (window["sex"] == "F").to_numpy()
    background = reference[features].sample(n=e.background_size, random_state=0)
    fav = (model.predict_proba(window[features])[:, 1] >= 0.5).astype(float)
    res: list[Any] = []
    cpu = _cpu(lambda: res.append(attribution_gap(
        model, window[features], mask, background=background, group_kind="declared", group="sex=F", sample_size=s,
        n_bootstrap=g.bootstrap, explainer="kernelshap", explainer_params={"n_samples": k}, favorable=fav,
        random_state=0, device="cpu")))
    gap = res[0]
    explained = gap.n_inside + gap.n_outside
    out: list[dict[str, Any]] = [{
        "row": f"attribution gap, kernelshap {k} x {e.background_size}, one group ({explained} explained rows)",
        "cpu_s": cpu, "predicted_s": explained * k * e.background_size * price}]

    def rescore() -> None:
        old = (model.predict_proba(window[features])[:, 1] >= 0.5).astype(float)
        rescore_outcome(fav, old, window[["sex"]], metric="selection_rate", group="sex=F", n_bootstrap=200)

    out.append({"row": f"rescore, one fired outcome series ({len(window)} window rows, bootstrap 200)",
                "cpu_s": _cpu(rescore), "predicted_s": len(window) * price})
    return out


def parts(price: float, rows: int) -> list[dict[str, Any]]:
    out = []
    for tag, e in (("previous defaults", PREVIOUS), ("current defaults", ExplanationsSpec())):
        cost = estimate(e, n_rows=rows, n_attributes=1, seconds_per_row=price, rescore_rows=rows)
        for part, evals in cost.parts.items():
            what = "window rows rescored" if part == "diagnose rescore" else "explained rows"
            out.append({"row": f"window parts at {tag}: {part} ({cost.explained_rows[part]} {what})",
                        "cpu_s": None, "predicted_s": evals * price})
        out.append({"row": f"window total at {tag}", "cpu_s": None, "predicted_s": cost.cpu_seconds})
    return out


def first_run(folder: Path) -> dict[str, Any]:
    import sqlalchemy as sa

    name = f"fairmon_b_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine("postgresql+psycopg://postgres@127.0.0.1:5432/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = f"postgresql://postgres@127.0.0.1:5432/{name}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FAIRMON_HOME": str(folder / "home")}
    env.pop("FAIRMON_DATABASE_URL", None)
    try:
        subprocess.run([str(BIN / "fairmon"), "db", "upgrade", "--db", url], cwd=folder, env=env, check=True,
                       capture_output=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        done = subprocess.run([str(BIN / "fairmon"), "run", "--monitor", "monitors/credit.yaml", "--logical-date",
                               "2026-01-01", "--db", url], cwd=folder, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        with admin.connect() as c:
            c.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    status = "succeeded" if done.returncode == 0 and "succeeded" in done.stdout else f"rc {done.returncode}"
    budget = [ln for ln in (done.stdout + done.stderr).splitlines() if "explanation" in ln and "CPU-s" in ln]
    steps = [ln.strip()[:200] for ln in done.stdout.splitlines() if ln.strip().startswith(("explain ", "diagnose "))]
    print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
    return {"row": f"fairmon run, minimal spec ({status})", "cpu_s": cpu, "wall_s": wall,
            "predicted_s": None, "note": " | ".join([*(budget[-1:]), *steps])[:600]}


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="tiny window, few explained rows (CI)")
    ap.add_argument("--run", action="store_true", help="also time `fairmon run` on the minimal spec (PostgreSQL)")
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--model", choices=["sklearn", "torch"], default="sklearn",
                    help="HistGradientBoosting pipeline (raw input) or fairmon's 64-32 MLP (encoded input)")
    ap.add_argument("--out", default=str(HERE / "results"))
    args = ap.parse_args(argv)
    rows = 200 if args.smoke else args.rows
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        model = setup(folder, rows, args.model)
        import pandas as pd

        window = pd.read_csv(folder / "data" / "2026-01-01.csv")
        Z = model.schema.transform(window[credit.WIDE_FEATURES])
        table = units(model, Z, args.smoke)
        table += diagnose(model, window, pd.read_csv(folder / "reference.csv"), table[0]["cpu_s"], args.smoke)
        table += parts(table[0]["cpu_s"], rows)
        if args.run:
            table.append(first_run(folder))
    kind = "sklearn HistGradientBoosting, raw" if args.model == "sklearn" else "torch fairmon MLP 64-32, encoded"
    settings = {"rows": rows, "features": len(credit.WIDE_FEATURES), "model": kind,
                "smoke": args.smoke}
    paths = write_results(args.out, f"explain_cost_{args.model}", table, settings=settings,
                          notes="cpu_s: measured CPU seconds (this process, or the `fairmon run` child); "
                                "predicted_s: fairmon.explain.cost at the measured price per model row.")
    for row in table:
        print(row)
    print(paths)
    return table


if __name__ == "__main__":
    main()
