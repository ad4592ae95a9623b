/*
 * SPANK plugin of the Slurm lab's modes that run Slurm from a Debian root
 * (SLURM_LAB_SLURM=20.11, 24.11 or 26.05): tasks go back to this machine's
 * root.
 *
 * In those modes slurmctld, slurmd and slurmstepd run from a Debian root of
 * the series (tools/slurm_lab/root.sh builds it and this plugin in it),
 * entered by tools/slurm_lab/enter_root.sh, which bind-mounts the machine's
 * own root at /host inside it. Just before each task is executed (a step's
 * task or a batch script), slurmstepd calls slurm_spank_task_init_privileged:
 * the task then chroots to the plugin's argument (the machine's root, default
 * /host) and returns to the same working directory. So tasks run this
 * machine's programs (the repository's .venv Python and TensorFlow, bash, ...)
 * as on the 22.05 lab, with the environment, network, hostname and /etc/hosts
 * Slurm gave them; only Slurm itself is another version. A failure fails the
 * task, with the reason in the slurmd log and on the task's stderr.
 *
 * plugstack.conf:  required /usr/local/lib/tfslurm-lab/host_root.so /host
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

SPANK_PLUGIN(tfslurm_host_root, 1);

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av) {
  const char *root = ac > 0 ? av[0] : "/host";
  char cwd[PATH_MAX];

  if (spank_remote(sp) != 1)
    return ESPANK_SUCCESS;
  if (getcwd(cwd, sizeof(cwd)) == NULL)
    strcpy(cwd, "/");
  if (chroot(root) != 0) {
    slurm_error("tfslurm_host_root: chroot(%s): %s", root, strerror(errno));
    return ESPANK_ERROR;
  }
  if (chdir(cwd) != 0) {
    slurm_error("tfslurm_host_root: chdir(%s) in %s: %s", cwd, root,
                strerror(errno));
    return ESPANK_ERROR;
  }
  return ESPANK_SUCCESS;
}
