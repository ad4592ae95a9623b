"""One rank of an MPI launch in the lab: what the launcher model makes of it.

Run by every rank that mpirun or mpiexec.hydra starts; writes
OUT/<launcher rank>.json with its host name, its launcher's rank and local
rank, and the `Launch` that tf_slurm.launchers.read_launch gives it, or the
error it raised. The launcher model and the core modules it uses are pure
(tests/upstream_shape_test.py keeps the core's free of TensorFlow), so the
task loads them from the repository with stand-ins of TensorFlow's packages:
seconds instead of a minute per rank.

  python launcher_task.py OUT
"""

import importlib
import json
import os
import socket
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PACKAGE = 'tensorflow.python.distribute.cluster_resolver'


def _import(name):
  """Module `name` of the package, its parents as empty stand-ins."""
  parts = PACKAGE.split('.')
  for depth in range(1, len(parts) + 1):
    parent = '.'.join(parts[:depth])
    if parent not in sys.modules:
      module = types.ModuleType(parent)
      module.__path__ = [os.path.join(ROOT, *parts[:depth])]
      sys.modules[parent] = module
  return importlib.import_module(PACKAGE + '.' + name)


def main(out):
  # The stand-ins of TensorFlow's packages serve the core's pure modules
  # that the companion's launcher model imports.
  _import('slurm_hostlist')
  sys.path.insert(0, ROOT)
  launchers = importlib.import_module('tf_slurm.launchers')
  env = os.environ
  rank = env.get('OMPI_COMM_WORLD_RANK', env.get('PMI_RANK'))
  report = {
      'hostname': socket.gethostname(),
      'rank': int(rank),
      'local_rank': int(env.get('OMPI_COMM_WORLD_LOCAL_RANK',
                                env.get('MPI_LOCALRANKID', -1))),
  }
  try:
    launch = launchers.read_launch(env, socket.gethostname())
    report.update(launcher=launch.launcher, nodes=list(launch.nodes),
                  rank_nodes=list(launch.rank_nodes),
                  local_indices=[launch.rank_nodes[:r].count(node)
                                 for r, node in enumerate(launch.rank_nodes)],
                  mapping=launch.mapping, own_rank=launch.rank)
  except (RuntimeError, ValueError) as e:
    report['error'] = '%s: %s' % (type(e).__name__, e)
  os.makedirs(out, exist_ok=True)
  path = os.path.join(out, '%s.json' % rank)
  with open(path + '.tmp', 'w') as f:
    json.dump(report, f, sort_keys=True)
  os.replace(path + '.tmp', path)
  return 0


if __name__ == '__main__':
  sys.exit(main(sys.argv[1]))
