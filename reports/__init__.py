"""Privacy reports: what the other packages compute, as Markdown, self-contained HTML, JSON and PNG figures.

* :mod:`dpkit.reports.config` — the TOML configuration (``reports/default.toml`` is the default), validated whole
  before anything runs;
* :mod:`dpkit.reports.job` — every number of a report as one plain dictionary;
* :mod:`dpkit.reports.figures` — the figures (matplotlib, Agg);
* :mod:`dpkit.reports.render` — ``report.md``, ``report.html`` and ``report.json`` (:mod:`dpkit.reports.markup`:
  users' text escaped, formulas as mathematics; :mod:`dpkit.reports.verdict_views` — the verdict rows in words);
  :mod:`dpkit.reports.texts` — relations and assumptions in words.

``dpkit report`` is the command line; :mod:`dpkit.reports.models` describes ``report.json`` (the checked-in
``reports/report.schema.json`` is generated from it).
"""
