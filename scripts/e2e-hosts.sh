#!/usr/bin/env bash
# Installs what test/hosts-e2e.test.ts drives, outside the product's dependencies:
#   - the real agent hosts, pinned: @anthropic-ai/claude-code and @openai/codex, into DIR;
#   - mneme itself, packed from this checkout (`npm pack`, which builds) and installed from the
#     tarball into DIR/mneme-prefix as a user would (`npm install -g --prefix`).
# DIR is $MNEME_E2E_HOSTS, or ~/.cache/mneme-e2e-hosts. Run it again after changing the product:
# the test refuses an installed mneme whose bundle differs from this checkout's build.
set -euo pipefail
cd "$(dirname "$0")/.."
CLAUDE_CODE_VERSION=2.1.197
CODEX_VERSION=0.171.0
dir="${MNEME_E2E_HOSTS:-$HOME/.cache/mneme-e2e-hosts}"
mkdir -p "$dir"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
want="@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION @openai/codex@$CODEX_VERSION"
have="$( (cd "$dir" && npm ls --depth=0 --parseable --long 2>/dev/null) | tr '\n' ' ')"
if [[ "$have" != *"@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"* || "$have" != *"@openai/codex@$CODEX_VERSION"* ]]; then
  # claude-code's postinstall only links its native binary; the package ships it. npm 11 refuses
  # --allow-scripts in a project-scoped install, so the folder's own package.json allows it.
  printf '%s\n' '{"private":true,"allowScripts":{"@anthropic-ai/claude-code":true}}' >"$dir/package.json"
  npm install --prefix "$dir" --no-save $want >/dev/null
fi
"$dir/node_modules/.bin/claude" --version
"$dir/node_modules/.bin/codex" --version
pack="$(mktemp -d)"
trap 'rm -rf "$pack"' EXIT
npm pack --silent --pack-destination "$pack" >/dev/null
rm -rf "$dir/mneme-prefix"
npm install -g --prefix "$dir/mneme-prefix" --allow-scripts=better-sqlite3 "$pack"/mneme-*.tgz >/dev/null
echo "mneme $(node -p "require('$dir/mneme-prefix/lib/node_modules/mneme/package.json').version") installed from its tarball in $dir/mneme-prefix"
echo "export MNEME_E2E_HOSTS=$dir"
