# Sourced by the scripts that build against a Debian source package
# (build-db-stress.sh, fio-source.sh): add_deb_src adds a deb-src source
# beside the machine's deb one -- the same mirrors and suites, from
# debian.sources (deb822) or sources.list (one-line form) -- and updates
# apt's lists. Needs `say` and `SUDO` from the caller.
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
