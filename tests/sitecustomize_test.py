"""The repository's sitecustomize.py does not hide another sitecustomize.

Python imports only the first `sitecustomize` module on `sys.path`. With the
repository root on PYTHONPATH that is the repository's, which installs the
overlay and must then run the next one on the path (e.g. Debian's
/usr/lib/python3.X/sitecustomize.py), as Python would have without it.
Each test starts a fresh interpreter with a stand-in for that other module,
which reports what it saw.
"""

import json
import os
import subprocess
import sys

from absl.testing import absltest

_REPO_ROOT = os.path.realpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
_MARK = "OTHER_SITECUSTOMIZE "
# The stand-in: prints that it ran and which finder was first on meta_path.
_OTHER_SITECUSTOMIZE = """\
import json, sys
print(%r + json.dumps({
    "first_finder": type(sys.meta_path[0]).__name__,
    "overlay_module": getattr(sys.modules.get("tf_overlay"), "__file__", None),
}), flush=True)
""" % _MARK


class SitecustomizeChainTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    self.other = self.create_tempdir("other").full_path
    with open(os.path.join(self.other, "sitecustomize.py"), "w") as f:
      f.write(_OTHER_SITECUSTOMIZE)

  def run_python(self, pythonpath):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(pythonpath))
    proc = subprocess.run(
        [sys.executable, "-c",
         "import sys; print('MAIN', sys.modules['sitecustomize'].__file__)"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
        cwd=self.create_tempdir("cwd").full_path)
    self.assertEqual(proc.returncode, 0, proc.stderr)
    reports = [json.loads(line[len(_MARK):])
               for line in proc.stdout.splitlines() if line.startswith(_MARK)]
    main = [line.split(" ", 1)[1] for line in proc.stdout.splitlines()
            if line.startswith("MAIN ")]
    return reports, main, proc

  def test_next_sitecustomize_runs_after_the_overlay_is_installed(self):
    reports, main, proc = self.run_python([_REPO_ROOT, self.other])
    self.assertLen(reports, 1, proc.stdout)
    self.assertEqual(reports[0]["first_finder"], "_OverlayFinder")
    self.assertEqual(os.path.realpath(reports[0]["overlay_module"]),
                     os.path.join(_REPO_ROOT, "tf_overlay.py"))
    # The repository's module is the one Python imported.
    self.assertEqual([os.path.realpath(m) for m in main],
                     [os.path.join(_REPO_ROOT, "sitecustomize.py")])

  def test_repository_twice_on_the_path_runs_the_next_one_once(self):
    reports, _, proc = self.run_python([_REPO_ROOT, _REPO_ROOT, self.other])
    self.assertLen(reports, 1, proc.stdout)


if __name__ == "__main__":
  absltest.main()
