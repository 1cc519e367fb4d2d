"""The ``dpkit audit`` command, one module per concern: the command and its forms (:mod:`.command`), the audit of
an RL algorithm (:mod:`.rl`, :mod:`.rl_sequential`, :mod:`.rl_tables`), of a release function (:mod:`.target`,
:mod:`.target_inputs`, :mod:`.one_run_target`), of a DP-SGD training run (:mod:`.training`,
:mod:`.training_options`), one-run audits (:mod:`.one_run`), and what they share: defaults, timing, verdict lines.
Nothing is imported here: the command's module loads only what the form given needs."""
