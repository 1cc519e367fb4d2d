"""The environments the algorithms run on, with their users made explicit.

Tabular MDPs (:mod:`dpkit.algorithms.envs.tabular`), their linear-mixture features
(:mod:`dpkit.algorithms.envs.features`), a user's own environments (:mod:`dpkit.algorithms.envs.from_gymnasium`) and
every environment by name (:mod:`dpkit.algorithms.envs.catalog`); LQ systems (:mod:`dpkit.algorithms.envs.lq`) and
their users (:mod:`dpkit.algorithms.envs.lq_users`). What they model: docs/explanation/environments.md.
"""
