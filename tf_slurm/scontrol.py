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
"""Hostlist expansion by Slurm's own `scontrol show hostnames`.

The core expands node lists with its built-in grammar
(`slurm_hostlist.expand_hostlist`). `get_expander` offers besides it
`scontrol show hostnames`, as TensorFlow r1.15 ran it, and both as a
cross-check: `tf_slurm.resolver.SlurmClusterResolver(hostlist_expansion=...)`
and the explain command's `--hostlist-expansion` choose among them.
"""

import os

from tensorflow.python.distribute.cluster_resolver import slurm_hostlist
from tf_slurm import util


def expand_hostlist_with_scontrol(hostlist):
  """Expands a hostlist with `scontrol show hostnames`, as TF r1.15 did.

  Raises:
    ValueError: If scontrol says the hostlist is invalid.
    RuntimeError: If scontrol cannot tell (`util.run_command`), or
      no slurm.conf tells it where Slurm is.
  """
  if util.slurm_conf_path(os.environ) is None:
    raise RuntimeError(
        'Cannot expand hostlist %r with scontrol: SLURM_CONF is not set and '
        "there is no slurm.conf in Slurm's usual places, so scontrol would "
        'look for a Slurm controller in DNS (Slurm sets SLURM_CONF in every '
        "task; outside a task set it, or use hostlist_expansion='builtin')" %
        (hostlist,))
  # After `--` no argument is an option (scontrol permutes them), so that a
  # hostlist such as `--version` is a hostlist.
  try:
    stdout, stderr = util.run_command(
        ['scontrol', '--', 'show', 'hostnames', hostlist])
  except RuntimeError as e:
    raise RuntimeError('Cannot expand hostlist %r: %s' %
                       (hostlist, e)) from None
  if 'invalid hostlist' in stderr.lower():
    # scontrol 22.05 reports a bad expression this way with exit status 0.
    raise ValueError('Invalid hostlist %r: scontrol says %s' %
                     (hostlist, stderr.strip()))
  return stdout.split()


def _expansion(expand, hostlist):
  """The names `expand` gives for `hostlist`, or the ValueError it raises."""
  try:
    return expand(hostlist)
  except ValueError as e:
    return e


def _show(expansion):
  if isinstance(expansion, ValueError):
    return 'an error (%s)' % expansion
  return util.abbreviate(expansion)


def expand_hostlist_checked(hostlist):
  """Expands with both the built-in grammar and scontrol; raises if they differ.

  A cheap canary for sites whose Slurm grammar moves ahead of the core's.
  """
  builtin = _expansion(slurm_hostlist.expand_hostlist, hostlist)
  slurm = _expansion(expand_hostlist_with_scontrol, hostlist)
  if isinstance(builtin, list) and builtin == slurm:
    return builtin
  if isinstance(builtin, ValueError) and isinstance(slurm, ValueError):
    raise builtin
  raise RuntimeError(
      'Hostlist %r: the built-in expansion gives %s but `scontrol show '
      'hostnames` gives %s' % (hostlist, _show(builtin), _show(slurm)))


_EXPANDERS = {
    'builtin': slurm_hostlist.expand_hostlist,
    'scontrol': expand_hostlist_with_scontrol,
    'check': expand_hostlist_checked,
}


def get_expander(name):
  """Returns the hostlist expander called `name`.

  Args:
    name: 'builtin' (the core's `slurm_hostlist.expand_hostlist`),
      'scontrol' (`scontrol show hostnames`, as TensorFlow r1.15 did) or
      'check' (both; they must agree).

  Raises:
    ValueError: If `name` is not one of these.
  """
  if not isinstance(name, str) or name not in _EXPANDERS:
    raise ValueError('hostlist_expansion=%r: expected one of %s' %
                     (name, sorted(_EXPANDERS)))
  return _EXPANDERS[name]
