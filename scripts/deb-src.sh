# Sourced by the scripts that build against a Debian source package
# (build-db-stress.sh, fio-source.sh). Needs `say` and `SUDO` from the caller.
#   installed_version PKG       the installed version, or nothing
#   fetch_source PKG VERSION DIR
#                               `apt-get source PKG=VERSION` into a new DIR,
#                               adding a deb-src source first when apt has
#                               none for that version
#   add_deb_src                 a deb-src source beside the machine's deb one
#                               -- the same mirrors and suites, from
#                               debian.sources (deb822) or sources.list (one-
#                               line form) -- and apt's lists updated

installed_version() {
  dpkg-query -W -f='${Status} ${Version}' "$1" 2>/dev/null |
    sed -n 's/^install ok installed //p'
}

fetch_source() {
  local pkg="$1" version="$2" dir="$3"
  if ! apt-cache showsrc "$pkg" 2>/dev/null | grep -qx "Version: $version"; then
    add_deb_src
    apt-cache showsrc "$pkg" 2>/dev/null | grep -qx "Version: $version" ||
      { say "apt has no source for $pkg $version"; exit 1; }
  fi
  say "fetching $pkg $version source into $dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  (cd "$dir" && apt-get source -qq "$pkg=$version" >&2)
}

add_deb_src() {
  local file=/etc/apt/sources.list.d/zonelab-deb-src.sources
  local text
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    text="$(sed 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources)"
  elif [ -f /etc/apt/sources.list ] && grep -q '^deb ' /etc/apt/sources.list; then
    file=/etc/apt/sources.list.d/zonelab-deb-src.list
    text="$(sed -n 's/^deb /deb-src /p' /etc/apt/sources.list)"
  else
    text="Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
  fi
  say "adding $file (deb-src)"
  printf '# Added by zonelab (apt-get source of the packages it builds against).\n%s\n' \
    "$text" | $SUDO tee "$file" >/dev/null
  $SUDO apt-get update -qq
}
