"""Privacy reports: what the other packages compute, as Markdown, self-contained HTML, JSON and PNG figures.

* :mod:`dpkit.reports.config` — the TOML configuration (``reports/default.toml`` is the default), validated whole
  before anything runs;
* :mod:`dpkit.reports.job` — every number of a report as one plain dictionary (ledgers, ε(δ) curves, the tree
  counter, RLSVI's per-run privacy, the audits, regret over seeds);
* :mod:`dpkit.reports.figures` — the figures (matplotlib, Agg);
* :mod:`dpkit.reports.render` — ``report.md``, ``report.html`` and ``report.json`` from Jinja2 templates
  (:mod:`dpkit.reports.markup`: users' text escaped, formulas as mathematics);
* :mod:`dpkit.reports.texts` — the relations, privacy models and assumptions in words.

``dpkit report`` is the command line; :mod:`dpkit.reports.models` describes ``report.json`` (with
:mod:`dpkit.reports.audit_models` for the audit's result; the checked-in
``reports/report.schema.json`` is generated from it by ``python -m dpkit.reports.files``).
"""
