"""The ``scan``, ``fix`` and ``rules`` commands and what commands share: common options, value
types, progress, baselines, watch mode and the rule documentation they print. Larger commands
(``report``, ``verify``, ``pr``, ``doctor``, ``kernels``) live in packages of their own."""
