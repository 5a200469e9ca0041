#!/usr/bin/env bash
# Installs the runtimes the smoke suite (test/runtimes/) runs under: Deno, Bun and workerd, as the
# npm registry ships their Linux x64 binaries, at the versions pinned in versions.json, into
# .cache/runtimes/ (git-ignored). They are platform packages, so they stay out of package.json
# and the lock file. Bun's default build needs AVX2; without it, its "baseline" build is used.
# Already-installed pinned versions are kept, so running this again is quick.
set -euo pipefail
cd "$(dirname "$0")/../.."

prefix=.cache/runtimes
bun=@oven/bun-linux-x64
grep -qw avx2 /proc/cpuinfo || bun=@oven/bun-linux-x64-baseline

specs=()
stale=0
for package in @deno/linux-x64-glibc "$bun" @cloudflare/workerd-linux-64; do
  version=$(node -p "require('./test/runtimes/versions.json')['$package']")
  installed=$(node -p "try { require('./$prefix/node_modules/$package/package.json').version } catch { '' }")
  specs+=("$package@$version")
  [ "$installed" = "$version" ] || stale=1
done

# All three named each time: an install with --no-save removes what it is not told to keep.
if [ "$stale" -eq 1 ]; then
  npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "${specs[@]}"
fi

"$prefix/node_modules/@deno/linux-x64-glibc/deno" --version | head -n 1
echo "bun $("$prefix/node_modules/$bun/bin/bun" --version) ($bun)"
"$prefix/node_modules/@cloudflare/workerd-linux-64/bin/workerd" --version
