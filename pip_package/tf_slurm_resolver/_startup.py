# Copyright 2026 The TensorFlow Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""Installs the overlay at Python start-up; run by `tf_slurm_resolver.pth`.

A failure here must not stop Python from starting: it is reported on stderr
(and kept in ERROR for `python -m tf_slurm_resolver`), and TensorFlow then
keeps its own resolver.
"""

import sys


def _install():
  """Installs the overlay; why it could not ('RuntimeError: ...'), or None."""
  try:
    from tf_slurm_resolver import overlay  # pylint: disable=g-import-not-at-top
    overlay.install()
  except Exception as e:  # pylint: disable=broad-except
    error = '%s: %s' % (type(e).__name__, e)
    sys.stderr.write('tf_slurm_resolver: TensorFlow keeps its own '
                     'SlurmClusterResolver: %s\n' % error)
    return error
  return None


# Why the overlay could not be installed, or None.
ERROR = _install()
