# Shared by scripts/demo, scripts/test, scripts/bench and scripts/fuzz:
# installing what the build needs and setting up huge pages. Sourced, not run.

EVRING_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Debian packages the build and tests need.
# libhugetlbfs0 is loaded with dlopen when present (no -dev package needed);
# libssl-dev provides libcrypto for the schema hashes; libisal-dev the recording
# blocks' CRC32C (lib/util/crc32c.hpp); libmicrohttpd-dev serves
# `evring metrics --listen`; the python3-* packages build and test the Python
# package (tests/python, run by meson test as python_test; python3-pandas for
# Batch.to_dataframe, optional: its test skips without it); valgrind for scripts/bench's
# per-event counts (cachegrind); cargo and rustc (Debian's: rustc 1.63) build and test the Rust
# crate offline (rust/, docs/rust.md; meson test runs it as rust_test).
EVRING_PACKAGES=(g++ meson ninja-build pkg-config python3 jq libhugetlbfs0 libcli11-dev libfmt-dev
                 libssl-dev libtomlplusplus-dev libgtest-dev libbenchmark-dev libzstd-dev zstd libisal-dev libboost-dev util-linux
                 libnats-dev nats-server protobuf-compiler prometheus tmux libmicrohttpd-dev
                 python3-dev python3-pybind11 pybind11-dev python3-numpy python3-pytest python3-pandas
                 valgrind cargo rustc)

log() { printf '== %s\n' "$*" >&2; }

# Installs any missing package (as root, with apt-get); otherwise says what is missing.
install_dependencies() {
    local missing=()
    local pkg
    for pkg in "${EVRING_PACKAGES[@]}" "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "missing packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
        return 1
    fi
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The first mounted hugetlbfs for the default huge page size, if any.
hugetlbfs_mount() {
    local default_kb
    default_kb=$(awk '/^Hugepagesize:/ {print $2}' /proc/meminfo 2>/dev/null)
    awk -v want="pagesize=$((default_kb / 1024))M" '$3 == "hugetlbfs" {
        if (index($4, "pagesize=") == 0 || index($4, want) > 0) { print $2; exit } }' /proc/self/mounts
}

# As root: make sure at least $1 huge pages are free and hugetlbfs is mounted.
# Prints nothing on success; explains itself on stderr when it cannot.
# Sets HUGETLBFS_STATUS to "mounted at DIR" or the reason it is unavailable.
setup_hugepages() {
    local want=${1:-512}
    HUGETLBFS_STATUS=""
    if [ ! -e /proc/sys/vm/nr_hugepages ]; then
        HUGETLBFS_STATUS="this kernel has no huge page support"
        return 1
    fi
    if [ "$(id -u)" -eq 0 ]; then
        local free total
        free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
        total=$(cat /proc/sys/vm/nr_hugepages)
        if [ "$free" -lt "$want" ]; then
            echo $((total + want - free)) > /proc/sys/vm/nr_hugepages 2>/dev/null || true
        fi
        if [ -z "$(hugetlbfs_mount)" ]; then
            mkdir -p /dev/hugepages
            mount -t hugetlbfs -o mode=1777 hugetlbfs /dev/hugepages 2>/dev/null || true
        fi
    fi
    local mount free_now
    mount=$(hugetlbfs_mount)
    free_now=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
    if [ -z "$mount" ]; then
        HUGETLBFS_STATUS="no hugetlbfs mount (mounting needs root; see docs/hugepages.md)"
        return 1
    fi
    if [ "$free_now" -lt 8 ]; then
        HUGETLBFS_STATUS="hugetlbfs at $mount but only $free_now free huge pages (see docs/hugepages.md)"
        return 1
    fi
    HUGETLBFS_STATUS="mounted at $mount, $free_now free huge pages"
}

# meson setup (or reconfigure) a build directory: setup_build DIR [meson options...]
setup_build() {
    local dir=$1
    shift
    if [ -f "$dir/build.ninja" ]; then
        meson configure "$dir" "$@" >/dev/null
    else
        meson setup "$dir" "$@" >/dev/null
    fi
}
