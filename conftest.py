"""pytest set-up: absl flags for absltest files.

(The overlay that serves this repository's modules is switched on by the
`.pth` of the editable install in .venv: see tools/setup.sh.)
"""

import atexit
import os
import shutil
import tempfile

from absl import flags

# absltest's create_tempdir() works under TEST_TMPDIR, by default a fixed
# /tmp/absl_testing whose per-test folders two concurrent pytest runs would
# share and delete under each other; each run gets its own (Bazel sets one).
if 'TEST_TMPDIR' not in os.environ:
  os.environ['TEST_TMPDIR'] = tempfile.mkdtemp(prefix='absl_testing.')
  atexit.register(shutil.rmtree, os.environ['TEST_TMPDIR'], True)

# absltest.main() is not run under pytest; its helpers (create_tempdir, ...)
# need the flags marked as parsed.
flags.FLAGS.mark_as_parsed()
