"""pip installs the repository's wheel beside TensorFlow, and uninstalls it.

Once for the class: a copy of the repository is built into a wheel (pip,
setuptools' backend from pyproject.toml, `--no-build-isolation --no-index`:
no network at all); a fresh venv is made (`--without-pip`, driven by this
Python's pip through `pip --python`) in which the TensorFlow of the Python
running this test is installed the way a second site-packages folder is: a
`.pth` line that puts its site-packages on `sys.path`, so that TensorFlow is
not copied or reinstalled (seconds, not minutes) and only the wheel's files
land in the venv's own site-packages. Then, each in a new interpreter:
which `SlurmClusterResolver` TensorFlow has with the wheel installed (also
from a folder holding a user's own `tf_slurm/`), the check command
(`python -m tf_slurm_resolver`), the explain command, `pip uninstall`, and
TensorFlow's class again. Last, the wheel installed with `pip install
--target` into a folder on PYTHONPATH, where Python runs no `.pth` file: what
the check command says there, the class served once a program installs
the overlay itself, and, from a Python with a user site directory, once a
`.pth` file there makes the folder a site directory as the check command
advises.

Skipped only if this Python has no TensorFlow, or no setuptools and wheel to
build with, or no pip.
"""

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

from absl.testing import absltest


_REPO_ROOT = os.path.realpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
_MODULE_PATH = os.path.join("tensorflow", "python", "distribute",
                            "cluster_resolver", "slurm_cluster_resolver.py")
_EXPLAIN_MODULE = "tf_slurm.explain"
_DIST = "tf-slurm-resolver"
_PACKAGE = "tf_slurm_resolver"
_COMPANION = "tf_slurm"
# What a program sees: where TensorFlow's public class comes from.
_PROBE = """\
import inspect, json
import tensorflow as tf
from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver
cls = tf.distribute.cluster_resolver.SlurmClusterResolver
config = getattr(tf.distribute.experimental, "SlurmTerminationConfig", None)
print("PROBE " + json.dumps({
    "resolver": inspect.getsourcefile(cls),
    "core": inspect.getsourcefile(slurm_cluster_resolver),
    "extends_core": issubclass(cls,
                               slurm_cluster_resolver.SlurmClusterResolver),
    "termination_config": config and inspect.getsourcefile(config),
    "v1_is_v2": tf.compat.v1.distribute.cluster_resolver.SlurmClusterResolver
                is cls,
    "tensorflow": tf.__file__,
}))
"""

# What a program does where the package's .pth does not run.
_INSTALL_OVERLAY = """\
from tf_slurm_resolver import overlay
overlay.install()
"""


def _said(proc):
  """The lines the overlay wrote on stderr."""
  return [l for l in proc.stderr.splitlines()
          if l.startswith("tf_slurm_resolver:")]


def _cannot_run_reason():
  """Why this test cannot run with this Python, or None."""
  if importlib.util.find_spec("tensorflow") is None:
    return "no TensorFlow in %s to install the wheel beside" % sys.executable
  for module in ("pip", "setuptools", "wheel", "venv"):
    if importlib.util.find_spec(module) is None:
      return ("building and installing the wheel offline needs %s in %s" %
              (module, sys.executable))
  return None


def _sha256(path):
  with open(path, "rb") as f:
    return hashlib.sha256(f.read()).hexdigest()


def _repo_modules(folder="tensorflow"):
  """{path under `folder`: sha256} of the modules the wheel must ship."""
  found = {}
  for dirpath, _, filenames in os.walk(os.path.join(_REPO_ROOT, folder)):
    for name in filenames:
      if name.endswith(".py") and not name.endswith("_test.py"):
        path = os.path.join(dirpath, name)
        found[os.path.relpath(path, _REPO_ROOT)] = _sha256(path)
  return found


class WheelInstallTest(absltest.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    reason = _cannot_run_reason()
    if reason:
      raise unittest.SkipTest(reason)
    cls.tmp = tempfile.mkdtemp(prefix="wheel_install_test_")
    cls.env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    cls.env.update(TF_CPP_MIN_LOG_LEVEL="2", PIP_NO_INDEX="1",
                   PIP_DISABLE_PIP_VERSION_CHECK="1")
    tf_dir = importlib.util.find_spec("tensorflow").submodule_search_locations
    cls.tf_site = os.path.dirname(list(tf_dir)[0])
    cls.tf_module = os.path.join(cls.tf_site, _MODULE_PATH)
    cls.tf_module_sha = _sha256(cls.tf_module)

    # A copy of the repository: the build writes build/ and *.egg-info.
    src = os.path.join(cls.tmp, "src")
    shutil.copytree(_REPO_ROOT, src, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".venvs", "bazel-*", "__pycache__", ".pytest_cache",
        "build", "dist", "*.egg-info"))
    dist = os.path.join(cls.tmp, "dist")
    cls.build = cls.run_cmd(
        [sys.executable, "-m", "pip", "wheel", "--no-deps",
         "--no-build-isolation", "--no-index", "-w", dist, src])
    wheels = os.listdir(dist) if os.path.isdir(dist) else []
    cls.wheel = os.path.join(dist, wheels[0]) if len(wheels) == 1 else None

    venv = os.path.join(cls.tmp, "venv")
    cls.run_cmd([sys.executable, "-m", "venv", "--without-pip", venv],
                check=True)
    cls.python = os.path.join(venv, "bin", "python")
    cls.site = cls.run_cmd(
        [cls.python, "-c",
         "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True).stdout.strip()
    with open(os.path.join(cls.site, "_tensorflow_beside.pth"), "w") as f:
      f.write(cls.tf_site + "\n")

    pip = [sys.executable, "-m", "pip", "--python", cls.python]
    cls.install = cls.run_cmd(pip + ["install", "--no-deps", cls.wheel or
                                     "(no wheel was built)"])
    cls.installed = cls.run_cmd([cls.python, "-c", _PROBE])
    served = os.path.join(cls.site, _PACKAGE, _MODULE_PATH)
    cls.served_sha = _sha256(served) if os.path.exists(served) else None
    cls.explain = cls.run_cmd(
        [cls.python, "-m", _EXPLAIN_MODULE, "--help"])
    cls.check = cls.run_cmd([cls.python, "-m", _PACKAGE])
    # A program run from a folder that holds the user's own tf_slurm package
    # (a namespace folder would not hide the installed one).
    cls.user_folder = os.path.join(cls.tmp, "user", _COMPANION)
    os.makedirs(cls.user_folder)
    with open(os.path.join(cls.user_folder, "__init__.py"), "w") as f:
      f.write('"""The user\'s own."""\n')
    cls.with_user_folder = cls.run_cmd(
        [cls.python, "-c", _PROBE], cwd=os.path.dirname(cls.user_folder))
    cls.uninstall = cls.run_cmd(pip + ["uninstall", "-y", _DIST])
    cls.uninstalled_files = sorted(os.listdir(cls.site))
    cls.uninstalled = cls.run_cmd([cls.python, "-c", _PROBE])

    # pip install --target, the folder on PYTHONPATH: no .pth runs there.
    cls.target = os.path.join(cls.tmp, "target")
    cls.target_install = cls.run_cmd(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--target",
         cls.target, cls.wheel or "(no wheel was built)"])
    target_env = dict(cls.env, PYTHONPATH=cls.target)
    cls.target_check = cls.run_cmd([cls.python, "-m", _PACKAGE],
                                   env=target_env)
    cls.target_installed = cls.run_cmd(
        [cls.python, "-c", _INSTALL_OVERLAY + _PROBE], env=target_env)
    # The same from a Python that has a user site directory (a venv has
    # none), TensorFlow on PYTHONPATH too: the check command's advice for
    # it, then that advice followed.
    base = getattr(sys, "_base_executable", sys.executable)
    user_env = dict(cls.env,
                    PYTHONUSERBASE=os.path.join(cls.tmp, "userbase"),
                    PYTHONPATH=os.pathsep.join([cls.target, cls.tf_site]))
    cls.user_site = cls.run_cmd(
        [base, "-c", "import site\nif site.ENABLE_USER_SITE:\n"
         "  print(site.getusersitepackages())"],
        env=user_env, check=True).stdout.strip()
    cls.user_site_check = cls.run_cmd([base, "-m", _PACKAGE], env=user_env)
    if cls.user_site:
      os.makedirs(cls.user_site)
      with open(os.path.join(cls.user_site, "target.pth"), "w") as f:
        f.write("import site; site.addsitedir(%r)\n" % cls.target)
    cls.user_site_served = cls.run_cmd([base, "-m", _PACKAGE], env=user_env)

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  @classmethod
  def run_cmd(cls, argv, check=False, cwd=None, env=None):
    # cwd: a folder without Python files, so '' on sys.path finds nothing.
    return subprocess.run(argv, capture_output=True, text=True,
                          env=env or cls.env, cwd=cwd or cls.tmp, timeout=300,
                          check=check)

  def probe(self, proc):
    self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
    lines = [l for l in proc.stdout.splitlines() if l.startswith("PROBE ")]
    self.assertLen(lines, 1, proc.stdout)
    return json.loads(lines[0][len("PROBE "):])

  def test_wheel_ships_only_its_package_and_pth(self):
    self.assertIsNotNone(self.wheel, self.build.stdout + self.build.stderr)
    with zipfile.ZipFile(self.wheel) as wheel:
      names = wheel.namelist()
      shipped = {
          name[len(_PACKAGE) + 1:]: hashlib.sha256(wheel.read(name)).hexdigest()
          for name in names if name.startswith(_PACKAGE + "/tensorflow/")}
      companion = {
          name: hashlib.sha256(wheel.read(name)).hexdigest()
          for name in names if name.startswith(_COMPANION + "/")}
    outside = [n for n in names
               if not n.startswith((_PACKAGE + "/", _PACKAGE + "-",
                                    _COMPANION + "/"))
               and n != _PACKAGE + ".pth"]
    # Nothing for TensorFlow's folders (or a top-level sitecustomize).
    self.assertEqual(outside, [])
    # The repository's modules and the companion, unchanged, tests left out.
    self.assertEqual(shipped, _repo_modules())
    self.assertEqual(companion, _repo_modules(_COMPANION))

  def test_installed_wheel_gives_tensorflow_this_resolver(self):
    self.assertEqual(self.install.returncode, 0, self.install.stderr)
    seen = self.probe(self.installed)
    served = os.path.join(self.site, _PACKAGE, _MODULE_PATH)
    self.assertEqual(os.path.realpath(seen["core"]), os.path.realpath(served))
    # The public class is the companion's, which extends the core's.
    self.assertEqual(os.path.realpath(seen["resolver"]),
                     os.path.realpath(os.path.join(self.site, _COMPANION,
                                                   "resolver.py")))
    self.assertTrue(seen["extends_core"])
    self.assertEqual(self.served_sha,
                     _sha256(os.path.join(_REPO_ROOT, _MODULE_PATH)))
    self.assertTrue(seen["v1_is_v2"])
    # TensorFlow itself is the one beside, not reinstalled.
    self.assertEqual(os.path.dirname(seen["tensorflow"]),
                     os.path.join(self.tf_site, "tensorflow"))

  def test_installed_wheel_adds_the_companions_termination_config(self):
    seen = self.probe(self.installed)
    self.assertEqual(
        os.path.realpath(seen["termination_config"]),
        os.path.realpath(os.path.join(self.site, _COMPANION,
                                      "termination.py")))
    self.assertIsNone(self.probe(self.uninstalled)["termination_config"])

  def test_installed_wheel_runs_the_explain_command(self):
    self.assertEqual(self.explain.returncode, 0, self.explain.stderr)
    # TensorFlow's module has no command line: this usage is the overlay's.
    self.assertIn("usage: python -m %s" % _EXPLAIN_MODULE,
                  self.explain.stdout)

  def test_installed_wheel_check_command_says_it_is_served(self):
    self.assertEqual(self.check.returncode, 0,
                     self.check.stdout + self.check.stderr[-3000:])
    lines = self.check.stdout.splitlines()
    self.assertEqual(
        lines[0], "tf.distribute.cluster_resolver.SlurmClusterResolver is "
        "tf-slurm-resolver's: its companion's, over its core.")
    self.assertIn("  file: " + os.path.join(self.site, _COMPANION,
                                            "resolver.py"), lines)
    self.assertIn("  core: " + os.path.join(self.site, _PACKAGE, _MODULE_PATH),
                  lines)

  def test_user_folder_named_tf_slurm_leaves_the_core_served(self):
    seen = self.probe(self.with_user_folder)
    self.assertEqual(
        os.path.realpath(seen["resolver"]),
        os.path.realpath(os.path.join(self.site, _PACKAGE, _MODULE_PATH)))
    said = _said(self.with_user_folder)
    self.assertLen(said, 1, self.with_user_folder.stderr)
    self.assertIn("the tf_slurm on sys.path is %s, not the companion "
                  "installed with tf-slurm-resolver (%s)" %
                  (os.path.realpath(self.user_folder),
                   os.path.join(self.site, _COMPANION)), said[0])

  def test_target_install_check_command_says_the_hook_did_not_run(self):
    self.assertEqual(self.target_install.returncode, 0,
                     self.target_install.stderr)
    self.assertEqual(self.target_check.returncode, 1,
                     self.target_check.stdout + self.target_check.stderr)
    lines = self.target_check.stdout.splitlines()
    self.assertEqual(
        lines[0], "tf.distribute.cluster_resolver.SlurmClusterResolver is "
        "TensorFlow's own, not tf-slurm-resolver's.")
    self.assertIn("  file: " + self.tf_module, lines)
    self.assertIn("  tf_slurm_resolver: " + os.path.join(self.target,
                                                         _PACKAGE), lines)
    self.assertIn(
        "Why: %s holds tf_slurm_resolver.pth but is not a site directory of "
        "this Python (it is on sys.path through PYTHONPATH, or as pip install "
        "--target left it): Python runs .pth files only in site directories, "
        "which python -m site lists." % self.target, lines)
    self.assertIn(
        "To serve it: pip install tf-slurm-resolver into a site directory "
        "(without --target), or start each program with `from "
        "tf_slurm_resolver import overlay; overlay.install()` before it "
        "imports TensorFlow.", lines)

  def test_target_install_serves_the_resolver_after_overlay_install(self):
    seen = self.probe(self.target_installed)
    self.assertEqual(os.path.realpath(seen["resolver"]),
                     os.path.realpath(os.path.join(self.target, _COMPANION,
                                                   "resolver.py")))
    self.assertEqual(os.path.realpath(seen["core"]),
                     os.path.realpath(os.path.join(self.target, _PACKAGE,
                                                   _MODULE_PATH)))
    self.assertEqual(_said(self.target_installed), [])

  def test_target_install_is_served_once_the_user_site_adds_it(self):
    if not self.user_site:
      self.skipTest("the base Python of %s has no user site directory" %
                    sys.executable)
    self.assertEqual(self.user_site_check.returncode, 1,
                     self.user_site_check.stderr[-3000:])
    self.assertIn(
        "To serve it: pip install tf-slurm-resolver into a site directory "
        "(without --target), or start each program with `from "
        "tf_slurm_resolver import overlay; overlay.install()` before it "
        "imports TensorFlow, or make %s a site directory for your user: put "
        "the line `import site; site.addsitedir(%r)` into a file ending in "
        ".pth in %s (python -m site --user-site)." %
        (self.target, self.target, self.user_site),
        self.user_site_check.stdout.splitlines())
    self.assertEqual(self.user_site_served.returncode, 0,
                     self.user_site_served.stdout +
                     self.user_site_served.stderr[-3000:])
    self.assertIn("  file: " + os.path.join(self.target, _COMPANION,
                                            "resolver.py"),
                  self.user_site_served.stdout.splitlines())

  def test_uninstall_restores_tensorflows_resolver(self):
    self.assertEqual(self.uninstall.returncode, 0, self.uninstall.stderr)
    self.assertEqual(
        os.path.realpath(self.probe(self.uninstalled)["resolver"]),
        os.path.realpath(self.tf_module))
    # Only the venv's own .pth is left, and TensorFlow's file is intact.
    self.assertEqual(self.uninstalled_files, ["_tensorflow_beside.pth"])
    self.assertEqual(_sha256(self.tf_module), self.tf_module_sha)


if __name__ == "__main__":
  absltest.main()
