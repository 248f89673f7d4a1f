# Sourced by the scripts that check or build vendored projects (needs $root): the crates
# `operator-rs init --runtime=vendored` writes into a project, as "<folder in this repository>
# <folder in the project>" lines, and what of each it writes: everything but its tests/ (the
# links of embedded-runtime/ and embedded-testing/, src/runtime_crate.rs).
vendored_crates=("runtime operator-rs-runtime" "testing operator-rs-testing")
vendored_parts=(Cargo.toml README.md rustfmt.toml src)

# Whether the project folder $2 holds exactly what init writes of this repository's crate $1.
same_as_vendored() {
  local crate="$1" copy="$2" part
  [ -d "$copy" ] || return 1
  for part in "${vendored_parts[@]}"; do
    diff -rq --exclude=target "$root/$crate/$part" "$copy/$part" >/dev/null 2>&1 || return 1
  done
  [ "$(cd "$copy" && find . -mindepth 1 -maxdepth 1 ! -name target | sort | tr '\n' ' ')" \
    = "$(printf './%s\n' "${vendored_parts[@]}" | sort | tr '\n' ' ')" ]
}

# Fails, showing the differences, unless the project in $1 holds exactly what init writes of
# each vendored crate.
check_vendored() {
  local pair crate folder part
  for pair in "${vendored_crates[@]}"; do
    read -r crate folder <<<"$pair"
    if ! same_as_vendored "$crate" "$1/$folder"; then
      echo "$1/$folder/ is not what init writes of this repository's $crate/:" >&2
      for part in "${vendored_parts[@]}"; do
        diff -r --exclude=target "$root/$crate/$part" "$1/$folder/$part" >&2 || true
      done
      ls -a "$1/$folder" >&2 || true
      return 1
    fi
  done
}
