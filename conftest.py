"""pytest set-up: absl flags for absltest files.

(The overlay that serves this repository's modules is switched on by the
`.pth` of the editable install in .venv: see tools/setup.sh.)
"""

from absl import flags

# absltest.main() is not run under pytest; its helpers (create_tempdir, ...)
# need the flags marked as parsed.
flags.FLAGS.mark_as_parsed()
