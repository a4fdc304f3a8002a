"""The data and the page of ``acp-toolcalls inspect``: a log's tool calls over time, as HTML.

Rules this package owns (issue 20):

- The history is computed here, in Python, from ``ToolCallStore``'s events, the ``validate``
  findings and the bridges' conversion losses; the page only renders and filters it (there is
  no second reducer in JavaScript).
- The core is sans-I/O: ``model.ReportBuilder`` is fed numbered lines and returns plain JSON
  values; ``page.render_page`` turns them into one self-contained HTML document (no network,
  scripts and styles inline). Only ``acp_toolcalls.cli.inspect`` reads and writes files.

Modules: ``terminal_output`` (a terminal's text as it grows), ``history`` (one side's calls
and terminals, entry by entry), ``asks`` (permission requests and their answers), ``model``
(the whole log: sides, findings, losses, summary), ``page`` (the HTML, with ``assets/``).
"""
