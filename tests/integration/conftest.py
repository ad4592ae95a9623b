"""A real Slurm cluster for the integration tests: tools/slurm_lab, per session.

The session fixture `slurm_lab` starts tools/slurm_lab/up.sh in its own
folder, network and namespace prefix (one of SLOTS, locked for the session,
so that a developer's lab and concurrent pytest sessions are not disturbed),
yields a `SlurmLab` to run srun/sbatch/salloc against it, and always stops it
with down.sh. Tasks run this repository's .venv Python, whose package
overlay (tools/setup.sh) serves the repository's resolver; under the Python
of another venv of this checkout (.venvs/tfX.Y: another TensorFlow release),
they run that one.

Network safety: the test process itself only runs Slurm clients, through the
lab's wrappers (they run inside the lab's controller namespace, with
SLURM_CONF set); all network code of the tests runs as tasks of lab steps.
Every subprocess has a timeout; on a timeout the lab's jobs of that call are
cancelled by their unique job name and the client's process group is killed.

The lab runs the Slurm that SLURM_LAB_SLURM names: 22.05 (the default,
Debian 12's packages) or 20.11, 24.11 or 26.05 (Debian 11's, 13's, forky's,
from the roots that tools/slurm_lab/root.sh builds and caches);
tools/test.sh runs the integration tests with each (README: which on
which). `SlurmLab.version` is the version the lab
really runs (up.sh checks the clients, slurmctld and every slurmd),
`SlurmLab.series` the one asked for.

Without root (or where network namespaces cannot be made) every integration
test is skipped with the reason; the terminal summary lists skips and
timings of the integration tests, and the Slurm version they ran on.
"""

import atexit
import collections
import dataclasses
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LAB_TOOLS = os.path.join(ROOT, 'tools', 'slurm_lab')
PYTHON = os.path.join(ROOT, '.venv', 'bin', 'python3')
if (not os.path.exists(PYTHON) or
    os.path.realpath(sys.prefix).startswith(os.path.realpath(ROOT) + os.sep)):
  PYTHON = sys.executable
# Labs of concurrent pytest sessions (e.g. two developers' runs) must not
# share a folder, network or namespace prefix: each session claims a slot with
# a lock held for the whole session. None of them is the developer's default
# lab (/tmp/tfslurm-lab, 10.213.0, tfsl-). TF_SLURM_IT_LAB_DIR/_NET/_NS
# choose one lab explicitly.
SLOTS = 4
SLOT_WAIT_SECS = 120
# The Slurm of the lab: '20.11', '22.05', '24.11' or '26.05' (see
# tools/slurm_lab/README.md).
SLURM_SERIES = os.environ.get('SLURM_LAB_SLURM', '22.05')


def lab_settings(slot):
  return {
      'SLURM_LAB_DIR': os.environ.get('TF_SLURM_IT_LAB_DIR',
                                      '/tmp/tfslurm-lab-it%d' % slot),
      'SLURM_LAB_NET': os.environ.get('TF_SLURM_IT_LAB_NET',
                                      '10.213.%d' % (20 + slot)),
      'SLURM_LAB_NS': os.environ.get('TF_SLURM_IT_LAB_NS', 'tfsit%d-' % slot),
      'SLURM_LAB_SLURM': SLURM_SERIES,
  }


def claim_slot():
  """Returns (slot, fd holding its lock); waits (bounded) for a free one."""
  slots = 1 if 'TF_SLURM_IT_LAB_DIR' in os.environ else SLOTS
  deadline = time.monotonic() + SLOT_WAIT_SECS
  while True:
    for slot in range(slots):
      path = lab_settings(slot)['SLURM_LAB_DIR'].rstrip('/') + '.session-lock'
      fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
      try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return slot, fd
      except BlockingIOError:
        os.close(fd)
    if time.monotonic() > deadline:
      return None, None
    time.sleep(1)


# The first run may apt-get install Slurm and munge, or build the Debian
# root of another Slurm series (a few minutes).
UP_TIMEOUT = 1500
DOWN_TIMEOUT = 300
# Variables of an outer Slurm job or a GPU set-up must not leak into steps.
_DROPPED_PREFIXES = ('SLURM_', 'SBATCH_', 'SALLOC_', 'SRUN_', 'PMI_', 'PMIX_')
_DROPPED_PREFIXES += ('TF_SLURM_',)  # The resolver's own notes, our settings.
_DROPPED = ('CUDA_VISIBLE_DEVICES', 'TF_CONFIG', 'PYTHONHOME')
_DAEMONS = ('slurmd', 'slurmctld', 'slurmscriptd', 'munged')


def cannot_run_reason():
  """Why the lab cannot run on this machine, or None."""
  if not sys.platform.startswith('linux'):
    return 'the Slurm lab needs Linux (network namespaces); this is %s' % (
        sys.platform)
  if os.geteuid() != 0:
    return ('the Slurm lab needs root (it creates network namespaces and runs '
            'slurmctld/slurmd as root); run the tests as root, as CI does')
  if not shutil.which('unshare'):
    return 'unshare (util-linux) is not installed'
  if not (shutil.which('ip') or shutil.which('apt-get')):
    return 'ip (iproute2) is not installed and apt-get is not available'
  try:
    probe = subprocess.run(
        ['unshare', '--net', '--uts', '--mount', '--propagation', 'slave',
         'true'], capture_output=True, text=True, timeout=30, check=False)
  except subprocess.TimeoutExpired:
    return 'unshare --net did not finish within 30 s'
  if probe.returncode != 0:
    return ('this machine cannot create network/UTS/mount namespaces '
            '(unshare --net --uts --mount: %s); e.g. a container without '
            'CAP_SYS_ADMIN' % (probe.stderr.strip() or probe.returncode))
  return None


def _tail(text, lines=40):
  return '\n'.join((text or '').splitlines()[-lines:])


@dataclasses.dataclass
class Result:
  """What a lab command did."""
  argv: list
  returncode: int
  stdout: str
  stderr: str
  seconds: float
  timed_out: bool = False

  def describe(self):
    return ('$ %s\nexit status %s%s after %.1f s\n--- stdout (end)\n%s\n'
            '--- stderr (end)\n%s' %
            (' '.join(self.argv), self.returncode,
             ' (TIMED OUT)' if self.timed_out else '', self.seconds,
             _tail(self.stdout), _tail(self.stderr)))


class Running:
  """A lab command started in the background (see SlurmLab.start)."""

  def __init__(self, lab, argv, job_name, proc, out, err):
    self.lab, self.argv, self.job_name = lab, argv, job_name
    self.proc, self._out, self._err = proc, out, err
    self.started = time.monotonic()

  def poll(self):
    return self.proc.poll()

  def wait(self, timeout):
    """Waits at most `timeout` s; on timeout cancels the job, kills srun."""
    timed_out = False
    try:
      self.proc.wait(timeout=max(0.1, timeout))
    except subprocess.TimeoutExpired:
      timed_out = True
      self.stop()
    seconds = time.monotonic() - self.started
    self._out.seek(0)
    self._err.seek(0)
    result = Result(self.argv, self.proc.returncode, self._out.read(),
                    self._err.read(), seconds, timed_out)
    self._out.close()
    self._err.close()
    return result

  def stop(self):
    """Cancels this command's jobs (by name), then kills its process group."""
    if self.job_name:
      self.lab.scancel('--name', self.job_name)
    try:
      self.proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
      pass
    if self.proc.poll() is None:
      try:
        os.killpg(self.proc.pid, signal.SIGKILL)
      except ProcessLookupError:
        pass
      self.proc.wait(timeout=30)


class SlurmLab:
  """Runs Slurm clients and steps on the lab started by up.sh."""

  def __init__(self, lab_dir, series=SLURM_SERIES):
    self.lab_dir = lab_dir
    self.settings = {}  # The SLURM_LAB_* variables it was started with.
    self.series = series  # The Slurm asked for, e.g. '24.11'.
    self.bin = os.path.join(lab_dir, 'bin')
    self.conf = os.path.join(lab_dir, 'etc', 'slurm.conf')
    self.python = PYTHON
    self.root = ROOT
    env = {
        k: v for k, v in os.environ.items()
        if not k.startswith(_DROPPED_PREFIXES) and k not in _DROPPED
    }
    env.update(
        SLURM_CONF=self.conf,
        SLURM_LAB_DIR=lab_dir,
        PATH=self.bin + os.pathsep + env.get('PATH', '/usr/bin:/bin'),
        PYTHONPATH=ROOT,
        PYTHONUNBUFFERED='1',
        TF_CPP_MIN_LOG_LEVEL='2',
        TF_ENABLE_ONEDNN_OPTS='0')
    self.env = env
    self.addresses = self._read_hosts()
    with open(os.path.join(lab_dir, 'run', 'version')) as f:
      self.version = f.read().strip()  # e.g. '24.11.5'

  def _read_hosts(self):
    """Node name -> IPv4 address, from the lab's hosts file."""
    addresses = {}
    with open(os.path.join(self.lab_dir, 'etc', 'hosts')) as f:
      for line in f:
        fields = line.split()
        if len(fields) == 2 and fields[0].count('.') == 3:
          addresses[fields[1]] = fields[0]
    return addresses

  def job_name(self, label):
    return 'tfit-%s-%s' % (label[:40], uuid.uuid4().hex[:8])

  def start(self, argv, job_name=None, env=None, cwd=None):
    """Starts a lab client command (srun, sbatch, ...) in the background."""
    # Unnamed temporary files: a pipe could fill up and block the command.
    out = tempfile.TemporaryFile('w+')  # pylint: disable=consider-using-with
    err = tempfile.TemporaryFile('w+')  # pylint: disable=consider-using-with
    full_env = dict(self.env, **(env or {}))
    proc = subprocess.Popen(  # pylint: disable=consider-using-with
        argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=full_env,
        cwd=cwd or ROOT, start_new_session=True)
    return Running(self, list(argv), job_name, proc, out, err)

  def run(self, argv, timeout, job_name=None, env=None, cwd=None):
    """Runs a lab client command; returns a Result (never raises on status)."""
    return self.start(argv, job_name, env, cwd).wait(timeout)

  def client(self, *argv, timeout=30):
    """Runs a short Slurm client command such as squeue or scontrol."""
    return self.run(list(argv), timeout)

  def scancel(self, *args):
    return self.client('scancel', *args, timeout=30)

  def srun_argv(self, srun_args, script, script_args=(), job_name=None):
    """srun [lab defaults] SRUN_ARGS python SCRIPT SCRIPT_ARGS."""
    argv = ['srun', '--kill-on-bad-exit=1', '--time=5']
    if job_name:
      argv += ['--job-name', job_name]
    return argv + list(srun_args) + [self.python, script] + list(script_args)

  def srun(self, label, srun_args, script, script_args=(), timeout=120,
           env=None, cwd=None):
    name = self.job_name(label)
    return self.run(self.srun_argv(srun_args, script, script_args, name),
                    timeout, job_name=name, env=env, cwd=cwd)

  def sbatch(self, label, script_path, timeout=240, cwd=None, sbatch_args=(),
             script_args=(), env=None):
    """Submits a batch script, waits (bounded) for the job to end.

    Returns:
      (Result of sbatch, job id or None, `scontrol show job` fields at the
      end, e.g. {'JobState': 'COMPLETED', 'ExitCode': '0:0'}).
    """
    name = self.job_name(label)
    started = time.monotonic()
    submitted = self.run(
        ['sbatch', '--parsable', '--job-name', name] + list(sbatch_args) +
        [script_path] + list(script_args), 60, job_name=name, env=env, cwd=cwd)
    if submitted.returncode != 0:
      return submitted, None, {}
    job_id = submitted.stdout.strip().split(';')[0]
    fields = {}
    while time.monotonic() - started < timeout:
      shown = self.client('scontrol', '-o', 'show', 'job', job_id)
      fields = dict(item.split('=', 1) for item in shown.stdout.split()
                    if '=' in item)
      if fields.get('JobState') not in (None, 'PENDING', 'RUNNING',
                                        'CONFIGURING', 'COMPLETING'):
        break
      time.sleep(0.5)
    else:
      self.scancel('--name', name)
      fields['TimedOut'] = 'yes'
    return submitted, job_id, fields

  def netns_names(self):
    try:
      with open(os.path.join(self.lab_dir, 'run', 'netns')) as f:
        return [line.strip() for line in f if line.strip()]
    except OSError:
      return []

  def task_processes(self):
    """Processes inside the lab's namespaces other than its daemons."""
    found = []
    for ns in self.netns_names():
      try:
        pids = subprocess.run(['ip', 'netns', 'pids', ns], capture_output=True,
                              text=True, timeout=10, check=False).stdout.split()
      except subprocess.TimeoutExpired:
        continue
      for pid in pids:
        try:
          with open('/proc/%s/comm' % pid) as f:
            comm = f.read().strip()
          with open('/proc/%s/cmdline' % pid, 'rb') as f:
            cmdline = f.read().replace(b'\0', b' ').decode(errors='replace')
        except OSError:
          continue
        if comm not in _DAEMONS:
          found.append('%s pid %s %s: %s' % (ns, pid, comm, cmdline[:200]))
    return found

  def wait_until_idle(self, timeout=30):
    """Waits until no job and no task process is left; returns leftovers."""
    deadline = time.monotonic() + timeout
    while True:
      jobs = self.client('squeue', '-h', '-o', '%i %j %T').stdout.strip()
      processes = self.task_processes()
      if not jobs and not processes:
        return []
      if time.monotonic() > deadline:
        return ([('job: ' + line) for line in jobs.splitlines()] +
                processes)
      time.sleep(0.25)


def _lab_script(name, env, timeout):
  started = time.monotonic()
  try:
    proc = subprocess.run(
        ['bash', os.path.join(LAB_TOOLS, name)], env=env, capture_output=True,
        text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    output = proc.stdout + proc.stderr
    return proc.returncode, output, time.monotonic() - started
  except subprocess.TimeoutExpired as e:
    output = (e.stdout or b'') + (e.stderr or b'')
    if isinstance(output, bytes):
      output = output.decode(errors='replace')
    return None, output, time.monotonic() - started


_TIMINGS = {}


def _running_lab(settings, what):
  """Starts a lab with `settings`, yields its SlurmLab, always stops it.

  Args:
    settings: the SLURM_LAB_* variables of up.sh (folder, network, ...).
    what: the lab's name in the summary's timings, e.g. 'lab'.
  """
  env = {k: v for k, v in os.environ.items()
         if not k.startswith(_DROPPED_PREFIXES)}
  env.update(settings)
  state = {'down': False}

  def down():
    if state['down']:
      return
    state['down'] = True
    status, output, seconds = _lab_script('down.sh', env, DOWN_TIMEOUT)
    _TIMINGS['%s down' % what] = seconds
    if status != 0:
      raise RuntimeError('tools/slurm_lab/down.sh failed (status %s):\n%s' %
                         (status, _tail(output)))

  atexit.register(lambda: state['down'] or down())  # If teardown never ran.
  try:
    status, output, seconds = _lab_script('up.sh', env, UP_TIMEOUT)
    if status != 0:
      pytest.fail('tools/slurm_lab/up.sh failed (status %s, %s=%s):\n%s' %
                  (status, 'SLURM_LAB_DIR', settings['SLURM_LAB_DIR'],
                   _tail(output)), pytrace=False)
    lab = SlurmLab(settings['SLURM_LAB_DIR'])
    lab.settings = settings
    _TIMINGS['%s up (Slurm %s)' % (what, lab.version)] = seconds
    yield lab
  finally:
    down()


@pytest.fixture(scope='session')
def lab_slot():
  """The settings of this session's lab slot, claimed for the session.

  Skips all users if the lab cannot run here.
  """
  reason = cannot_run_reason()
  if reason:
    pytest.skip(reason)
  slot, lock_fd = claim_slot()
  if slot is None:
    pytest.fail('all %d integration lab slots are taken by other pytest '
                'sessions for more than %d s' % (SLOTS, SLOT_WAIT_SECS),
                pytrace=False)
  try:
    yield lab_settings(slot)
  finally:
    os.close(lock_fd)  # Releases the slot.


@pytest.fixture(scope='session')
def slurm_lab(lab_slot):
  """The running lab, as a SlurmLab."""
  yield from _running_lab(lab_slot, 'lab')


def _beside(main, folder_suffix, ns_suffix, net_offset):
  """Folder, network and namespaces of a lab beside the slot's main lab."""
  net = main['SLURM_LAB_NET'].split('.')
  net[2] = str((int(net[2]) + net_offset) % 256)
  return {
      'SLURM_LAB_DIR': main['SLURM_LAB_DIR'] + folder_suffix,
      'SLURM_LAB_NET': '.'.join(net),
      'SLURM_LAB_NS': main['SLURM_LAB_NS'] + ns_suffix,
      'SLURM_LAB_SLURM': SLURM_SERIES,
  }


# The CPU-binding lab: two nodes of as many CPUs as this machine has (2 here),
# so that every CPU Slurm gives a task exists and task/affinity binds it.
BINDING_CPUS = 2


@pytest.fixture(scope='module')
def cpu_binding_lab(slurm_lab):
  """A second lab, TaskPlugin=task/affinity, beside `slurm_lab`.

  The main lab's nodes declare more CPUs than this machine has, which
  task/affinity cannot bind (a step of 4 tasks on a node fails), so binding
  is this lab's alone: nodes n9 and n10 of BINDING_CPUS CPUs each, no GPUs,
  in the main lab's folder + '-binding', the namespace prefix + 'cpu-' and
  the /24 128 above the main lab's (10.213.20 -> 10.213.148).

  Yields:
    its SlurmLab.
  """
  if len(os.sched_getaffinity(0)) < BINDING_CPUS:
    pytest.skip('the CPU-binding lab needs %d CPUs; this process may use %d' %
                (BINDING_CPUS, len(os.sched_getaffinity(0))))
  settings = _beside(slurm_lab.settings, '-binding', 'cpu-', 128)
  settings.update(SLURM_LAB_TASK_PLUGIN='task/affinity',
                  SLURM_LAB_NODES='debug:n9,n10:%d:0' % BINDING_CPUS)
  yield from _running_lab(settings, 'CPU-binding lab')


# The topology lab's nodes: four of 2 CPUs, so that steps stay small.
TOPOLOGY_NODES = 'debug:n9,n10,n11,n12:2:0'


@pytest.fixture(scope='module')
def topology_lab(lab_slot, request):
  """A lab with a network topology (tools/slurm_lab: SLURM_LAB_TOPOLOGY).

  Parametrize it indirectly with (series, {SLURM_LAB_* setting: value}): a
  lab of nodes n9..n12 (TOPOLOGY_NODES) with those settings, in the slot's
  folder + '-topology', the namespace prefix + 'topo-' and the /24 64 above
  the slot's (10.213.20 -> 10.213.84); skipped unless SLURM_LAB_SLURM is
  that series. It runs without the main lab.

  Yields:
    its SlurmLab.
  """
  series, topology = request.param
  if series != SLURM_SERIES:
    pytest.skip('a Slurm %s topology lab (this run: Slurm %s)' %
                (series, SLURM_SERIES))
  settings = _beside(lab_slot, '-topology', 'topo-', 64)
  settings.update(topology, SLURM_LAB_NODES=TOPOLOGY_NODES)
  yield from _running_lab(settings, 'topology lab %s' % ' '.join(
      '%s=%s' % (name[len('SLURM_LAB_'):].lower(), value)
      for name, value in sorted(topology.items())))


# ---------------------------------------------------------------- reporting
_OUTCOMES = []


def pytest_runtest_logreport(report):
  if 'tests/integration/' not in report.nodeid.replace(os.sep, '/'):
    return
  if report.when == 'call' or report.skipped or report.failed:
    reason = ''
    if report.skipped and isinstance(report.longrepr, tuple):
      reason = report.longrepr[2]
      if reason.startswith('Skipped: '):
        reason = reason[len('Skipped: '):]
    outcome = report.outcome
    if report.failed and report.when != 'call':
      outcome = 'error'  # In set-up or teardown, e.g. of the lab.
    if hasattr(report, 'wasxfail'):  # An expected failure (a known bug).
      outcome, reason = 'xfail', report.wasxfail
    _OUTCOMES.append((report.nodeid, outcome, report.duration, reason))


def pytest_terminal_summary(terminalreporter):
  if not _OUTCOMES and not _TIMINGS:
    return
  write = terminalreporter.write_line
  terminalreporter.section('Slurm integration tests (real Slurm %s lab)' %
                           SLURM_SERIES)
  for what, seconds in sorted(_TIMINGS.items()):
    write('%7.1f s  %s' % (seconds, what))
  skipped = collections.defaultdict(list)
  for nodeid, outcome, duration, reason in _OUTCOMES:
    if outcome == 'skipped':
      skipped[reason].append(nodeid)
    else:
      write('%7.1f s  %-7s %s%s' % (duration, outcome.upper(), nodeid,
                                    ('\n           (%s)' % reason)
                                    if reason else ''))
  ran = [duration for _, outcome, duration, _ in _OUTCOMES
         if outcome != 'skipped']
  if ran:
    write('%7.1f s  in %d integration tests (lab set-up not included)' %
          (sum(ran), len(ran)))
  for reason, nodeids in sorted(skipped.items()):
    write('SKIPPED %d of %d integration tests: %s' %
          (len(nodeids), len(_OUTCOMES), reason))
