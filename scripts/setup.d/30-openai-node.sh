#!/usr/bin/env bash
# The official OpenAI Node SDK, for the server's client-compatibility test
# (make test only).
set -euo pipefail
if [ "${ORC_SETUP_FOR:-test}" = demo ]; then
	echo "setup: skipped the OpenAI Node SDK (only make test uses it)" >&2
	exit 0
fi
dir=server/testdata/openai-client
if ! command -v npm >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
	else
		echo "setup: npm not found; the OpenAI SDK test will be skipped" >&2
		exit 0
	fi
fi
if [ ! -d "$dir/node_modules/openai" ]; then
	(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
