"""``python -m pep726hook``: run a program with the hook on, or the full command.

A program's command line goes straight to the runner; only the rest (help,
version, subcommands, usage errors) imports the full command (:mod:`._cli`),
which would otherwise delay every program's first line.
"""

import sys

from ._runner import UsageError, program_name, run_command_line

try:
    status = run_command_line(sys.argv[1:])
except UsageError as error:
    from ._cli import usage_error

    status = usage_error(program_name(), str(error))
if status is None:
    from ._cli import main

    status = main()
raise SystemExit(status)
