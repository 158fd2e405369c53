"""Upper limits of a monitor spec: every numeric field that drives cost, and the YAML input itself.

Why: a spec is input, and a typo (``bootstrap: 100000000``) or a hostile file must fail at load with
the field named, not run for minutes into a MemoryError inside a worker. Each limit sits one to two
orders of magnitude above the default and every example spec, so no real monitor meets it; the table
in ``monitors/README.md`` ("Limits") lists them, and a test keeps the two in step.

Examples
--------
>>> COST_LIMITS["outcome.bootstrap"]
100000
>>> MAX_SPEC_BYTES
1048576
"""

from __future__ import annotations

from typing import Final

#: largest spec file (bytes); the example specs are 2-4 KB
MAX_SPEC_BYTES: Final = 1024 * 1024
#: most YAML nodes a spec may expand to, aliases counted at every use (an alias bomb trips it at once);
#: the largest example spec has about 300
MAX_YAML_NODES: Final = 50_000
#: deepest nesting of YAML collections (the example specs nest 4 deep)
MAX_YAML_DEPTH: Final = 64
#: most problems one error message lists (the count of the rest follows)
MAX_LISTED_PROBLEMS: Final = 20

MAX_BOOTSTRAP: Final = 100_000
MAX_RUMIE_K: Final = 100
MAX_RUMIE_ITERATIONS: Final = 100_000
MAX_BACKGROUND_SIZE: Final = 10_000
MAX_LIME_SAMPLES: Final = 100_000
MAX_KERNELSHAP_SAMPLES: Final = 100_000
MAX_GESD_SAMPLE_SIZE: Final = 10_000
MAX_GESD_PERTURBATIONS: Final = 1_000
MAX_OPENXAI_PERTURBATIONS: Final = 10_000
MAX_OPENXAI_SAMPLE_SIZE: Final = 10_000
MAX_ATTRIBUTION_GAP_SAMPLE_SIZE: Final = 10_000
MAX_EXPLANATION_BUDGET_S: Final = 86_400
MAX_POPULATION: Final = 1_000
MAX_GENERATIONS: Final = 1_000
MAX_EVALUATIONS: Final = 1_000_000
MAX_TIME_BUDGET_S: Final = 7 * 86_400
MAX_N_JOBS: Final = 256
MAX_EPOCHS: Final = 1_000
#: largest weight of FEU's demographic-parity training penalty (not a cost: beyond it the penalty swamps the
#: likelihood and training only learns a constant; the default range is [0, 30])
MAX_FAIRNESS_WEIGHT: Final = 1_000
MAX_HISTORY_WINDOWS: Final = 1_000
MAX_CATEGORIES: Final = 10_000
MAX_RETRIES: Final = 100
MAX_RETRY_DELAY_S: Final = 86_400
MAX_TASK_TIMEOUT_S: Final = 7 * 86_400
MAX_LATENESS_S: Final = 7 * 86_400
MAX_POKE_INTERVAL_S: Final = 3_600
MAX_BLAS_THREADS: Final = 256

#: field path -> upper limit (inclusive), for messages, the README table and its test
COST_LIMITS: Final[dict[str, int]] = {
    "outcome.bootstrap": MAX_BOOTSTRAP,
    "rumie.k": MAX_RUMIE_K,
    "rumie.iterations": MAX_RUMIE_ITERATIONS,
    "explanations.background_size": MAX_BACKGROUND_SIZE,
    "explanations.lime_samples": MAX_LIME_SAMPLES,
    "explanations.kernelshap_samples": MAX_KERNELSHAP_SAMPLES,
    "explanations.gesd.sample_size": MAX_GESD_SAMPLE_SIZE,
    "explanations.gesd.n_perturbations": MAX_GESD_PERTURBATIONS,
    "explanations.openxai.n_perturbations": MAX_OPENXAI_PERTURBATIONS,
    "explanations.openxai.sample_size": MAX_OPENXAI_SAMPLE_SIZE,
    "explanations.attribution_gap.sample_size": MAX_ATTRIBUTION_GAP_SAMPLE_SIZE,
    "explanations.attribution_gap.bootstrap": MAX_BOOTSTRAP,
    "explanations.budget_cpu_s": MAX_EXPLANATION_BUDGET_S,
    "retraining.population": MAX_POPULATION,
    "retraining.generations": MAX_GENERATIONS,
    "retraining.max_evaluations": MAX_EVALUATIONS,
    "retraining.time_budget_s": MAX_TIME_BUDGET_S,
    "retraining.n_jobs": MAX_N_JOBS,
    "retraining.bounds.epochs": MAX_EPOCHS,
    "drift.baseline.n_windows": MAX_HISTORY_WINDOWS,
    "drift.cold_start.min_history": MAX_HISTORY_WINDOWS,
    "drift.persistence.n": MAX_HISTORY_WINDOWS,
    "validation.max_categories": MAX_CATEGORIES,
    "execution.retries": MAX_RETRIES,
    "execution.retry_delay_s": MAX_RETRY_DELAY_S,
    "execution.task_timeout_s": MAX_TASK_TIMEOUT_S,
    "execution.deadline_s": MAX_TASK_TIMEOUT_S,
    "execution.blas_threads": MAX_BLAS_THREADS,
    "data.max_lateness_s": MAX_LATENESS_S,
    "data.poke_interval_s": MAX_POKE_INTERVAL_S,
}
