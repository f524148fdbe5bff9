import os
import sys

# `python -m` puts the current directory first on sys.path, where an `orbax.py` or `yaml.py` would
# replace the installed library; ckptbench adds the directories a suite's generators need at the
# end (config/_loader.py), as the `ckptbench` command starts.
if sys.path and sys.path[0] in ("", os.getcwd()):
  del sys.path[0]

from ckptbench.cli import main  # noqa: E402

sys.exit(main())
