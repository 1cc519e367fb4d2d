"""``report.json`` as pydantic models: the report's JSON schema is generated from them.

:func:`dpkit.reports.job.compute_report` builds the report as plain, JSON-ready data and
:func:`dpkit.reports.render.report_json` writes it; :class:`ReportJson` describes that data, and :func:`report_schema`
is its JSON schema (``reports/report.schema.json`` is the checked-in copy, kept equal by a test).
:func:`validate_report` parses a report's data through the models. The report's own objects admit no other key;
objects that come whole from the layers below (ledgers, audits) allow further keys: see docs/reference/schemas.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, ValidationError, model_validator

from dpkit.data_files import shown

from .audit_models import AUDIT_TAGS, AuditDone, AuditSkipped
from .config import AlgorithmConfig, QuickConfig
from .messages import pydantic_message
from .model_types import (
    Command,
    Count,
    Index,
    NonNegative,
    OpenProbability,
    Own,
    PaperClaim,
    Passed,
    Position,
    Positive,
    PrivacyModel,
    Relation,
    Sigma,
    Verdict,
)

__all__ = [
    "METHOD_KEYS",
    "ReportJson",
    "SummaryRow",
    "AlgorithmSection",
    "Provenance",
    "report_schema",
    "validate_report",
]

#: The keys of the ε(δ) curves' methods (``dpkit.accountant.VARIANTS``), written out so that reading
#: this module imports no accountant; a test keeps them equal.
METHOD_KEYS: tuple[str, ...] = ("exact", "pld", "rdp", "rdp-mironov", "zcdp-rdp-optimal", "zcdp", "classic")

# -- the summary ---------------------------------------------------------------------------------------


class WorstFlag(Own):
    """The worst of a ledger's flags (error, then warning, then info): the first of that severity."""

    code: str
    severity: Literal["error", "warning", "info"]
    release: str | None
    message: str


class FlagCounts(Own):
    """How many flags of each severity a ledger has."""

    error: Annotated[int, Field(ge=0)]
    warning: Annotated[int, Field(ge=0)]
    info: Annotated[int, Field(ge=0)]


class SummaryRow(Own):
    """One row of the report's verdict table (one algorithm)."""

    algorithm: str
    privacy_model: PrivacyModel
    relation: Relation
    delta: float
    claimed_epsilon: float
    epsilon_at_paper_sigma: NonNegative
    method: str = Field(description="the accountant of the ε: exact (μ-GDP), or an upper bound such as pld")
    delta_informative: OpenProbability = Field(description="min(1e-5, 1/K); 1e-5 when the ledger has no K")
    epsilon_at_informative_delta: NonNegative = Field(description="ε of the paper's σ at delta_informative")
    mu_at_paper_sigma: float | None = Field(description="null: a release that is not a plain Gaussian")
    noise_ratio: Positive = Field(description="σ_paper / σ_tight")
    sigma_paper: Sigma
    sigma_tight: Sigma
    sigma_optimal: Any = Field(description="the optimal allocation's σ (as the ledger's); null: none exists")
    audit_sigma: str | float = Field(description="the σ the audit ran at: paper, tight, optimal or a number")
    audited_epsilon_lower: float | None = Field(
        description="the certified lower bound on ε at the headline position (audit_position); null: no audit"
    )
    audited_mu_lower: float | None = Field(
        description="the certified lower bound on μ at the headline position; null: no audit"
    )
    audit_position: Position | None = Field(
        description="the headline position of the changed user, whose verdict is the audit's: every audited number "
        "of the row is read there; null: no audit"
    )
    audited_mu_estimate: float | None = Field(description="the point estimate of μ (not a bound); null: no audit")
    audited_epsilon_estimate: float | None = Field(
        description="the ε at δ of the trade-off shape fitted to the audit's ROC (an estimate, not a bound); "
        "null: no audit, or no shape fits"
    )
    audit_power_ratio: float | None = Field(
        description="what the audit could certify if the claim were exactly met, as a share of the claim's μ "
        "(below 0.5: inconclusive); null: no audit"
    )
    audit_mode: Literal["fixed", "sequential"] | None = Field(
        description="fixed: runs runs per dataset at each position; sequential: anytime-valid, stopping at the first "
        "violation (dpkit audit --sequential); null: no audit"
    )
    audit_runs: int | None = Field(
        description="runs per dataset and position of the fixed audit (the one a sequential audit stands in for); "
        "null: no audit"
    )
    audit_runs_used: int | None = Field(
        description="runs per dataset the audit used, all positions together: a fixed audit's runs × positions, a "
        "sequential audit's own count (fewer when it stopped early, up to 1.3× when it ran to its budget); null: no "
        "audit"
    )
    audit_confidence: float | None = Field(description="the confidence of the certified bounds; null: no audit")
    audit_power_needed: float | None = Field(
        description="the power ratio below which the audit says inconclusive; null: no audit, or a sequential audit "
        "(it reports no power ratio)"
    )
    audit_reason: str | None = Field(
        description="why the audit's verdict is what it is, in one sentence (its headline position's judgement); "
        "null: no audit, or a sequential audit that stopped at a violation before its final test"
    )
    verdict: Verdict | None = Field(description="null: no audit")
    paper_claim: PaperClaim = Field(
        description="the paper's claim, judged off the ledger: met; flawed (met here, but its accounting has an "
        "error-level flag, so no proof stands behind it); not met (the exact ε of the paper's σ exceeds the claimed "
        "ε); not certified (an upper bound on it does)"
    )
    worst_flag: WorstFlag | None = Field(description="null: the ledger has no flag")
    flag_counts: FlagCounts


# -- the ledger (as dpkit ledger ALGORITHM --json prints it) ------------------------------------------------


class LedgerRelease(Passed):
    """One declared release of the ledger."""

    name: str
    statistic: str
    count: Count
    paper_count: Count
    sensitivity: Positive
    sensitivity_add_remove: float | None
    sensitivity_replace_one: float
    paper_sensitivity: float
    noise: Literal["iid", "symmetric"]
    sigma_paper: Positive
    sigma_tight: Positive
    steps: Count = Field(1, description="the steps the release's mechanisms are split into (per-step sensitivities)")
    step_sensitivities: list[NonNegative] = Field(
        default_factory=list, description="the sensitivity of each step's mechanisms (0: the same for every user)"
    )
    sigma_optimal: NonNegative | list[NonNegative] | None = Field(
        None, description="σ of the optimal allocation: one, or one per step (null: none computed)"
    )
    notes: list[str]


class LedgerJoint(Passed):
    """Releases of the declaration composed jointly, and why."""

    releases: Annotated[list[str], Field(min_length=2)]
    description: str


class LedgerFlag(Passed):
    """A finding about the paper's accounting."""

    code: str
    severity: Literal["error", "warning", "info"]
    release: str | None
    message: str


class LedgerRecord(Passed):
    """The algorithm's ledger at the target (ε, δ): ``dpkit ledger ALGORITHM … --json``."""

    algorithm: str
    privacy_model: PrivacyModel
    paper: str
    relation: Relation
    paper_relation: Relation
    method: str
    epsilon: Positive
    delta: OpenProbability
    parameters: dict[str, Any]
    releases: Annotated[list[LedgerRelease], Field(min_length=1)]
    sigma_paper: Sigma
    sigma_tight: Sigma
    noise_ratio: Positive
    epsilon_claimed_by_paper: float
    epsilon_achieved_by_paper_sigma: NonNegative
    mu_at_paper_sigma: float | None  # None: a release that is not a plain Gaussian (no single μ)
    users: Count | None = Field(description="K, the users the informative δ is for (null: the ledger has no K)")
    delta_informative: OpenProbability = Field(description="the informative δ: min(1e-5, 1/K), 1e-5 without K")
    epsilon_at_informative_delta_by_paper_sigma: NonNegative
    epsilon_at_informative_delta_by_tight_sigma: NonNegative
    mu_at_tight_sigma: float | None  # None: a release that is not a plain Gaussian (no single μ)
    sigma_optimal: Any = Field(None, description="σ optimal: one number, or release → σ (one, or one per step)")
    optimal_allocation: dict[str, Any] | None = Field(
        None, description="what σ optimal minimises (objective), whether it was computed, and why not (note)"
    )
    noise_variance: dict[str, float | None] | None = Field(
        None, description="the total noise variance Σᵢ nᵢσᵢ² of the paper, tight and optimal allocations"
    )
    epsilon_at_informative_delta_by_optimal_sigma: NonNegative | None = None
    mu_at_optimal_sigma: float | None = None
    flags: list[LedgerFlag]
    notes: list[str]
    joint: list[LedgerJoint] | None = Field(
        None, description="releases composed jointly: their pairs cannot attain every Δ at once (dpkit ledger --json)"
    )


# -- the ε(δ) curves, the tree counter, RLSVI --------------------------------------------------------------


def _every_method(value: dict[str, Any]) -> dict[str, Any]:
    missing = [key for key in METHOD_KEYS if key not in value]
    if missing:
        raise ValueError(f"misses the method {missing[0]!r}")
    return value


_EVERY_METHOD = {"required": list(METHOD_KEYS)}
MethodEpsilons = Annotated[
    dict[str, list[float | None]],
    AfterValidator(_every_method),
    Field(description="ε at each δ (null: the method gives none)", json_schema_extra=_EVERY_METHOD),
]
MethodLabels = Annotated[
    dict[str, str],
    AfterValidator(_every_method),
    Field(description="each method's name in the figures", json_schema_extra=_EVERY_METHOD),
]


class EpsilonCurves(Own):
    """ε(δ) of every accounting method for the declared releases at the paper's σ."""

    sigma: Literal["paper"]
    relation: Relation
    mu: float
    rho: float
    deltas: Annotated[list[OpenProbability], Field(min_length=1)]
    methods: MethodEpsilons
    labels: MethodLabels
    refusals: dict[str, list[str | None]] = Field(description="why a method gives no ε at a δ")


class FileEpsilonCurves(Own):
    """ε(δ) of every accounting method for a user's ledger or event file, at the file's own noise."""

    sigma: Literal["file"]
    relation: Relation
    mu: float | None = Field(description="μ of a ledger of Gaussian releases (null: any other file)")
    rho: float | None = Field(description="ρ of a ledger of Gaussian releases (null: any other file)")
    deltas: Annotated[list[OpenProbability], Field(min_length=1)]
    methods: MethodEpsilons
    labels: MethodLabels
    refusals: dict[str, list[str | None]] = Field(description="why a method gives no ε at a δ")


class AssessmentFlag(Passed):
    """A finding about a file against its claim (dpkit.accountant.declarations.Flag)."""

    code: Literal["claim-not-met", "delta-not-informative", "no-claim"]
    severity: Literal["error", "warning", "info"]
    release: str | None
    message: str


class LedgerAssessmentRecord(Passed):
    """What a file's noise certifies at δ and at the informative δ, and the noise a claim needs
    (dpkit.accountant.assessment.LedgerAssessment.to_dict())."""

    delta: OpenProbability
    users: Count | None = Field(description="K, the users the informative δ is for (null: not given)")
    relation: Relation
    gaussian: bool = Field(description="whether the file is a ledger of Gaussian releases (exact accounting)")
    mu: float | None = Field(description="μ of a Gaussian ledger (null: any other file)")
    epsilons: dict[str, float | None] = Field(description="ε at δ under every method (null: refused or infinite)")
    refusals: dict[str, str] = Field(description="why a method gives no ε at δ")
    certified_epsilon: NonNegative | None = Field(
        description="the smallest ε over the methods that answered: a sound upper bound (null: none, or +inf)"
    )
    certified_method: str | None = Field(description="the method that gave the certified ε")
    certified_epsilon_lower: NonNegative | None = Field(
        description="the largest lower bound on the true ε a method states: the truth lies in [this, certified ε] "
        "(null: nothing bounds it below)"
    )
    definitive: bool = Field(description="whether the certified ε is exact (no accounting gives less)")
    delta_informative: OpenProbability = Field(description="min(1e-5, 1/K); 1e-5 without K")
    epsilons_at_informative_delta: dict[str, float | None]
    refusals_at_informative_delta: dict[str, str]
    certified_epsilon_at_informative_delta: NonNegative | None
    certified_method_at_informative_delta: str | None
    claim_epsilon: float | None = Field(description="the claimed ε (null: no claim)")
    claim_met: bool | None = Field(description="certified ε <= claim (null: no claim); false: not certified")
    claim_status: Literal["no claim", "met", "not met", "not certified"] = Field(
        description="not met: the exact ε, or the lower end of the interval the truth lies in, exceeds the claim; "
        "not certified: only upper bounds above the claim"
    )
    noise_scale: NonNegative | None = Field(
        description="c: the factor on every noise scale of the file that the claim needs (null: not computed)"
    )
    noise_ratio: NonNegative | None = Field(
        description="1/c: times the noise the claim needs the file has (< 1: too little; null: not computed or "
        "+inf). c is rounded up, so a claim met with nothing to spare shows a ratio a hair below 1"
    )
    scale_note: str = Field(description="why no noise scale was computed, if none was")
    flags: list[AssessmentFlag]


class LedgerSection(Own):
    """A user's ledger or event file (a [[ledger]] entry of the config): dpkit.reports.user_ledgers.ledger_section."""

    name: str
    file: str = Field(description="the file as the config gives it (relative to the config's folder)")
    kind: Literal["ledger file", "event file"]
    relation: Relation
    description: str = Field(description="the releases or event in one line")
    releases: list[dict[str, Any]] | None = Field(description="a ledger file's releases (null: an event file)")
    event: dict[str, Any] | None = Field(description="an event file's event in dpkit's form (null: a ledger file)")
    delta: OpenProbability
    epsilon: float | None = Field(description="the claimed ε (null: no claim)")
    users: Count | None
    assessment: LedgerAssessmentRecord
    epsilon_curves: FileEpsilonCurves
    command: Command
    worst_flag: WorstFlag | None = Field(description="the worst of the assessment's flags (null: none)")


class LedgerEntryRecord(Own):
    """One [[ledger]] entry of the configuration the report ran (LedgerConfig.to_dict())."""

    name: str
    file: str = Field(description="as the config gives it")
    path: str = Field(description="the file resolved against the config's folder")
    kind: Literal["ledger file", "event file"]
    delta: OpenProbability
    epsilon: float | None
    users: Count | None
    relation: Relation | None


class TreeSection(Own):
    """The binary counter behind a tree-counter algorithm's releases."""

    steps: Count
    schedule: Literal["after-each", "before-episode"]
    released_prefixes: Index
    max_psums_per_item: int
    max_psums_per_prefix: int
    paper_depth: int
    prefix_psums: list[int] = Field(description="popcount(t) of each released prefix t")
    item_psums: list[int] = Field(description="the p-sums that contain each user")
    sigma_paper: Sigma
    sigma_tight: Sigma


class RlsviSection(Own):
    """RLSVI's privacy as K grows: its closed forms, the worst case, and the runs' own (one per K).

    The runs' ``mu_run`` and ``epsilon_run`` are ex-post (``run_kind``): they depend on each run's visit counts,
    the users' own states and actions, so they describe that run and are not a DP guarantee;
    ``mu_worst_case``/``epsilon_worst_case`` (the worst case over datasets) are, and are shown beside them.
    """

    states: int
    actions: int
    horizon: int
    delta: float
    env: str
    episodes: list[int]
    epsilon_paper: list[float]
    epsilon_exact_gdp: list[float]
    mu_worst_case: list[float]
    epsilon_worst_case: list[float]
    seed: int
    mu_run: list[float]
    epsilon_run: list[float]
    worst_user_run: list[int]
    run_kind: Literal["ex-post"] = Field(
        description="mu_run and epsilon_run depend on the run's visit counts: ex-post, data-dependent, not a DP "
        "guarantee (epsilon_worst_case is the guarantee over datasets)"
    )


# -- regret --------------------------------------------------------------------------------------------------


class RatioWithInterval(Own):
    """A ratio of mean final regrets and its interval (at the section's level)."""

    ratio: float
    low: float
    high: float


class RegretAtSigma(Own):
    """Regret over the seeds at one σ."""

    sigmas: dict[str, Any] = Field(description="the σ of each release (one per step for per-step allocations)")
    final_regret: list[float]
    final_regret_mean: float
    final_regret_std: NonNegative
    final_regret_band: NonNegative | None = Field(
        description="half-width of the level-band of the final mean regret over seeds (null: one seed)"
    )
    loglog_slope: float | None
    loglog_slope_low: float | None = Field(description="the slope's bootstrap interval over seeds, lower end")
    loglog_slope_high: float | None = Field(description="the slope's bootstrap interval over seeds, upper end")
    growth: Literal["sublinear", "near-linear", "linear", "not shown sublinear"] | None = Field(
        description="sublinear: the slope's interval lies at or below 0.95; near-linear: below 1 but reaching above "
        "0.95; linear: it reaches 1 with its lower end >= 0.95"
    )
    mean: list[float] = Field(description="the mean regret over seeds at the checkpoints")
    band: list[float | None] = Field(
        description="half-width of the Student-t band of the mean at the level, at the checkpoints (null: one seed)"
    )
    cumulative_regret: Annotated[list[list[float]], Field(min_length=1)] = Field(
        description="one row per seed, at the checkpoints"
    )
    over_baselines: dict[str, RatioWithInterval] = Field(
        description="the final mean regret over each baseline's (exact) regret, with the Student-t interval of the "
        "mean over seeds"
    )
    gain_last_half: NonNegative | None = Field(
        description="LQ: the mean |entry| of the gains K_h played over the last half of the episodes, over seeds "
        "(null: a tabular algorithm)"
    )


class RegretSection(Own):
    """Regret at the paper's σ, the tight σ and the optimal allocation (null where none exists)."""

    seeds: list[int]
    env_seed: int
    episodes: Count
    checkpoints: list[int] = Field(description="the episodes (1-based) kept of each curve")
    level: OpenProbability = Field(description="the level of the bands and of the slope intervals")
    env: str = Field(description="the environment of the regret runs (a tabular one or an LQ world)")
    options: dict[str, Any] = Field(description="the agent options of the regret runs (e.g. a preset)")
    note: str | None = Field(description="the config's sentence on why this world and these options (null: none)")
    baselines: dict[str, NonNegative] = Field(
        description="the exact expected regret over the K episodes of the policies that ignore their data: uniform "
        "(tabular: uniformly random actions; LQ: controls uniform in the ball of radius gamma) and, LQ, no control"
    )
    paper: RegretAtSigma
    tight: RegretAtSigma
    optimal: RegretAtSigma | None
    tight_over_paper: float | None
    over_paper: dict[str, RatioWithInterval] = Field(
        description="tight and optimal: their final mean regret over the paper's, with a paired bootstrap interval "
        "over the seeds"
    )
    equal_rows: str | None = Field(description="why two rows of the regret table are equal (null: none are)")


# -- an algorithm's sections, provenance, the whole report -----------------------------------------------------


class AlgorithmSection(Own):
    """Everything the report shows of one algorithm."""

    name: str
    privacy_model: PrivacyModel
    paper: str
    relation: Relation
    relation_text: str
    privacy_model_text: str
    assumptions: Annotated[list[str], Field(min_length=1)]
    settings: AlgorithmConfig
    ledger: LedgerRecord
    ledger_command: Command
    epsilon_curves: EpsilonCurves
    tree: TreeSection | None = Field(description="tree-counter algorithms only")
    rlsvi: RlsviSection | None = Field(description="rlsvi only")
    audit: AuditDone | AuditSkipped = Field(discriminator="available")
    regret: RegretSection


class ConfigRecord(Own):
    """The configuration the report ran (``ReportConfig.to_dict()``)."""

    source: str = Field(description="the config file, or 'default'")
    quick: bool = Field(description="whether --quick capped the sizes")
    title: str
    seed: Index
    seeds: Count
    workers: Count
    deltas: Annotated[list[OpenProbability], Field(min_length=1)]
    plugins: list[str] = Field(
        default_factory=list,
        description="the user's algorithms registered first: FILE.py:NAME (absolute) or module:NAME",
    )
    quick_caps: QuickConfig
    algorithms: list[AlgorithmConfig]
    ledgers: list[LedgerEntryRecord] = Field(default_factory=list, description="the [[ledger]] entries")


class Seeds(Own):
    """The seeds of the report's runs."""

    regret: list[int]
    environment: int
    audit: int
    rlsvi_runs: int


class Versions(Passed):
    """Installed versions of dpkit and of every package it requires (null: not installed)."""

    dpkit: str | None
    numpy: str | None
    scipy: str | None
    matplotlib: str | None
    jinja2: str | None
    __pydantic_extra__: dict[str, str | None] = Field(init=False)


class Provenance(Own):
    """What reproduces the report: the command line (without --out), the config, seeds and versions."""

    command_line: list[str]
    config: ConfigRecord
    seeds: Seeds
    versions: Versions
    python: str


class ReportJson(Own):
    """Every number of a ``dpkit report`` (``dpkit.reports.job.compute_report``). Version 1."""

    format: Literal[1]
    title: str
    summary: list[SummaryRow] = Field(description="one verdict row per algorithm")
    algorithms: list[AlgorithmSection]
    ledgers: list[LedgerSection] = Field(description="the user's ledger and event files ([[ledger]] entries)")
    provenance: Provenance

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        json_schema_extra={
            "anyOf": [{"properties": {"algorithms": {"minItems": 1}}}, {"properties": {"ledgers": {"minItems": 1}}}]
        },
    )

    @model_validator(mode="after")
    def _one_row_per_algorithm(self) -> ReportJson:
        if not self.algorithms and not self.ledgers:
            raise ValueError("algorithms and ledgers must not both be empty")
        rows, names = [r.algorithm for r in self.summary], [a.name for a in self.algorithms]
        if rows != names:
            raise ValueError(f"summary must have one row per algorithm, in order: {names}, got {rows}")
        return self


#: The checked-in file's ``$id`` and ``title``.
SCHEMA_ID = "https://dpkit.invalid/report.schema.json"


def report_schema() -> dict[str, Any]:
    """The JSON schema (draft 2020-12) of ``report.json``, generated from :class:`ReportJson`.

    Returns:
        The schema, as plain data.
    """
    schema = ReportJson.model_json_schema(mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
        "title": "dpkit report.json",
    }


def validate_report(data: Any) -> ReportJson:
    """Parse a report's JSON data (as :func:`json.loads` gives it) through :class:`ReportJson`.

    Args:
        data: The report's data.

    Returns:
        The validated model.

    Raises:
        ValueError: One line naming the first key that does not fit (as a path such as
            ``algorithms[0].ledger.epsilon``) and its value; an unknown key is named first.
    """
    try:
        return ReportJson.model_validate(data)
    except ValidationError as err:
        errors = err.errors(include_url=False)
        error = min(errors, key=lambda e: e["type"] != "extra_forbidden")
        raise ValueError(f"report.json: {_message(data, error)}") from None


#: JSON words for what pydantic's messages (and the config's, written for TOML) say otherwise.
_JSON_WORDS = {
    "none_required": "must be null",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "dict_type": "must be an object",
    "bool_type": "must be true or false",
}


def _message(data: Any, error: Mapping[str, Any]) -> str:
    """One error as one line: its location as a path through ``data`` (a union's tag, which is no key of
    the data, left out), then what is wrong and the value."""
    loc = _data_loc(data, tuple(p for p in error["loc"] if p not in AUDIT_TAGS))
    kind = error["type"]
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        tag = str(error.get("ctx", {}).get("discriminator", "")).strip("'")
        key = _path((*loc, tag))
        if kind == "union_tag_not_found":
            return f"{key} is required"
        expected = str(error["ctx"]["expected_tags"]).replace("True", "true").replace("False", "false")
        return f"{key} must be one of {expected}, got {shown(error['ctx']['tag'])}"
    if kind in _JSON_WORDS:
        return f"{_path(loc)} {_JSON_WORDS[kind]}, got {shown(error.get('input'))}"
    return pydantic_message({**error, "loc": loc})


def _data_loc(data: Any, loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """``loc`` without the parts that are not keys or indices of ``data`` on the way (a tagged union's
    tag); the last part is kept (a missing key)."""
    out: list[Any] = []
    node = data
    for i, part in enumerate(loc):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif i < len(loc) - 1:
            continue  # not a step through the data
        out.append(part)
    return tuple(out)


def _path(loc: tuple[Any, ...]) -> str:
    """``("algorithms", 1, "ledger", "epsilon")`` → ``algorithms[1].ledger.epsilon``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
