"""``migrate fleet``: readiness of many repositories as units of work on Ray.

One module per job: ``manifest`` (which repositories, with which options), ``checkout`` (a
shallow, hook-free clone into a private folder, or a local folder's content digest), ``unit``
(one repository: scan, report, optional ``fix --diff``, kernel check and ``verify``), ``store``
(the results folder, keyed by repository, commit, tool version and options, written
atomically), ``engine`` (Ray tasks, retries, progress; a serial engine for comparison),
``aggregate`` (the fleet's figures from the results folder), ``render`` (HTML, Markdown, JSON
and CSV) and ``cli`` (the command). Ray is imported only by ``engine``, and only when used.
"""
