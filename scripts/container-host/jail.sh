#!/bin/sh
# The local container host's jail (scripts/container-host/isolation.mjs). Runs as root, as pid 1 of a
# new PID, mount, network, IPC and UTS namespace made by `unshare`, with an environment that holds
# nothing of the job's (so nothing the job chose can steer these root commands). It builds the job's
# filesystem in a fresh tmpfs: the system's programs and libraries read-only, a fresh /proc, a few
# devices, and the job's own working folder (a tmpfs of the disk limit holding a copy of the image);
# nothing of the service (its checkout, .dev, .wrangler) or of other jobs is there. Then it brings
# up the namespace's loopback, starts the forwarder that lets the job reach the API's one port, and
# becomes the job's command under an unprivileged uid with no capabilities and no way to gain any.
# NODE is the host's node; JAIL_NODE where the jail shows it (its own path in the system's folders,
# else under /opt/node, so no path of the host reaches the job).
#   jail.sh JAIL IMAGE_DIR JOB_UID DISK_MB API_PORT API_SOCKET NODE FORWARDER NPROC CPU_SECONDS JAIL_NODE
set -eu
JAIL=$1 IMAGE=$2 JOB_UID=$3 DISK_MB=$4 API_PORT=$5 API_SOCKET=$6 NODE=$7 FORWARDER=$8 NPROC=$9
shift 9
CPU_SECONDS=$1 JAIL_NODE=$2
R="$JAIL/root"
# Who runs the job and the forwarder: their own uids, or (JOB_UID 0: in an unprivileged user
# namespace, where only the caller's uid is mapped and groups cannot be set) the namespace's only user.
# Either way with no capabilities and no way to gain any.
DROP="--no-new-privs --inh-caps=-all --bounding-set=-all"
if [ "$JOB_UID" = 0 ]; then
  AS_JOB="$DROP"
  AS_FORWARDER="$DROP"
else
  AS_JOB="--reuid=$JOB_UID --regid=$JOB_UID --clear-groups $DROP"
  AS_FORWARDER="--reuid=65534 --regid=65534 --clear-groups $DROP"
fi

mount --make-rprivate /
mount -t tmpfs -o size=8m,mode=0755,nosuid,nodev tmpfs "$R"

# System directories, read-only; merged-/usr symlinks (/bin -> usr/bin) are recreated as links.
for d in usr bin sbin lib lib32 lib64 libx32 etc; do
  if [ -L "/$d" ]; then
    ln -s "$(readlink "/$d")" "$R/$d"
  elif [ -d "/$d" ]; then
    mkdir -p "$R/$d"
    mount --rbind "/$d" "$R/$d"
    mount -o remount,bind,ro,nosuid,nodev "$R/$d"
  fi
done
# The node that runs the host, when it lives outside those directories (nvm, a tarball): its prefix
# at /opt/node.
if [ "$JAIL_NODE" != "$NODE" ]; then
  NODE_PREFIX=$(dirname "$(dirname "$NODE")")
  mkdir -p "$R/opt/node"
  mount --bind "$NODE_PREFIX" "$R/opt/node"
  mount -o remount,bind,ro,nosuid,nodev "$R/opt/node"
fi

mkdir "$R/dev"
mount -t tmpfs -o size=64k,mode=0755,nosuid,noexec tmpfs "$R/dev"
for n in null zero full random urandom; do
  touch "$R/dev/$n"
  mount --bind "/dev/$n" "$R/dev/$n"
done
ln -s /proc/self/fd "$R/dev/fd"
ln -s /proc/self/fd/0 "$R/dev/stdin"
ln -s /proc/self/fd/1 "$R/dev/stdout"
ln -s /proc/self/fd/2 "$R/dev/stderr"
mkdir "$R/proc"
mount -t proc -o nosuid,nodev,noexec proc "$R/proc"

# The working folder: the disk limit is its size; the image's files are copied in, owned by the job.
mkdir "$R/job"
mount -t tmpfs -o "size=${DISK_MB}m,mode=0700,nosuid,nodev" tmpfs "$R/job"
cp -R "$IMAGE/." "$R/job/"
mkdir -p "$R/job/.tmp"
chown -R "$JOB_UID:$JOB_UID" "$R/job"
ln -s job/.tmp "$R/tmp"

# What the job runs (written by the host; the job may read its own environment), and the forwarder
# with the host's API socket, so that it too runs inside the jail and sees nothing else.
mkdir "$R/.jail"
cp "$JAIL/entry.sh" "$R/.jail/entry.sh"
chown "$JOB_UID:$JOB_UID" "$R/.jail/entry.sh"
chmod 0400 "$R/.jail/entry.sh"
if [ "$API_PORT" != 0 ]; then
  cp "$FORWARDER" "$R/.jail/forward.mjs"
  touch "$R/.jail/api.sock"
  mount --bind "$API_SOCKET" "$R/.jail/api.sock"
fi
mount -o remount,bind,ro,nosuid,nodev "$R"

# The job's network: its own loopback, on which the API's port leads (through the socket the host
# listens on) to the API and nowhere else: no other local server (the host's API, the dev server's
# inspector) is reachable. The forwarder runs as nobody; it says it listens by closing the fifo.
ip link set lo up
if [ "$API_PORT" != 0 ]; then
  mkfifo "$JAIL/ready"
  # shellcheck disable=SC2086 # word splitting of the options is meant
  chroot "$R" /usr/bin/setpriv $AS_FORWARDER -- \
    "$JAIL_NODE" /.jail/forward.mjs "$API_PORT" /.jail/api.sock 3>"$JAIL/ready" </dev/null &
  read -r _ <"$JAIL/ready" || true
fi

cd "$R"
# An empty environment: the entry script sets the job's own, and nothing of this one (no host path)
# reaches it.
# shellcheck disable=SC2086 # word splitting of the options is meant
exec chroot "$R" /usr/bin/env -i /usr/bin/prlimit "--nproc=$NPROC" "--cpu=$CPU_SECONDS" "--fsize=$((DISK_MB * 1024 * 1024))" --core=0 -- \
  /usr/bin/setpriv $AS_JOB -- \
  /bin/sh /.jail/entry.sh
