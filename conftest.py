"""pytest set-up: the TensorFlow overlay, and absl flags for absltest files."""

from absl import flags

import tf_overlay

# Before any test module imports tensorflow (see tf_overlay.py).
tf_overlay.install()

# absltest.main() is not run under pytest; its helpers (create_tempdir, ...)
# need the flags marked as parsed.
flags.FLAGS.mark_as_parsed()
