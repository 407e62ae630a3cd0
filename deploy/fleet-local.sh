#!/usr/bin/env bash
# A local fleet: K bot-server replicas behind nginx, all on loopback.
#
#   deploy/fleet-local.sh up   [--replicas 3] [--port 50050] [--dir target/fleet] [--bin PATH] [-- bot-server flags...]
#   deploy/fleet-local.sh down [--dir target/fleet]
#
# Clients talk to nginx on 127.0.0.1:PORT (gRPC) and 127.0.0.1:PORT+100 (HTTP gateway and web
# board); replica i listens on PORT+i (gRPC) and PORT+100+i (HTTP) and is named replica-i.
# `up` builds bot-server (release) unless --bin is given, waits until everything accepts
# connections, and prints the addresses; `down` stops nginx and the replicas gracefully.
# Needs nginx (Debian: apt-get install nginx).
set -euo pipefail

cmd=${1:-}
shift || true
replicas=3
port=50050
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/target/fleet"
bin=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --replicas) replicas=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

wait_port() {
  local p=$1 i
  for i in $(seq 1 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  echo "nothing listens on 127.0.0.1:$p" >&2
  return 1
}

down() {
  if [ -f "$dir/nginx.pid" ]; then
    pid=$(cat "$dir/nginx.pid")
    kill -QUIT "$pid" 2>/dev/null || true
    for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  fi
  for pidfile in "$dir"/replica-*.pid; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$pidfile"
  done
}

up() {
  [ -x "$nginx_bin" ] || { echo "nginx not found (Debian: apt-get install nginx)" >&2; exit 1; }
  if [ -z "$bin" ]; then
    cargo build --release -q -p emergo-bot-server --bin bot-server --manifest-path "$root/Cargo.toml"
    bin="$root/target/release/bot-server"
  fi
  mkdir -p "$dir"
  down
  servers=""
  http_servers=""
  for i in $(seq 1 "$replicas"); do
    p=$((port + i))
    h=$((port + 100 + i))
    "$bin" --listen "127.0.0.1:$p" --http-listen "127.0.0.1:$h" --name "replica-$i" "${extra[@]}" \
      >"$dir/replica-$i.log" 2>&1 &
    echo $! >"$dir/replica-$i.pid"
    servers="$servers        server 127.0.0.1:$p max_fails=1 fail_timeout=5s;\n"
    http_servers="$http_servers        server 127.0.0.1:$h max_fails=1 fail_timeout=5s;\n"
  done
  user_line=""
  [ "$(id -u)" = 0 ] && user_line="user root;"
  sed -e "s|@GRPC_LISTEN@|127.0.0.1:$port|" \
      -e "s|@RUN_DIR@|$dir|g" \
      -e "s|@USER_LINE@|$user_line|" \
      -e "s|@GRPC_SERVERS@|$servers|" \
      -e "s|@HTTP_LISTEN@|127.0.0.1:$((port + 100))|" \
      -e "s|@HTTP_SERVERS@|$http_servers|" \
      "$root/deploy/nginx/emergo-fleet.conf.template" >"$dir/nginx.conf"
  for i in $(seq 1 "$replicas"); do wait_port $((port + i)); wait_port $((port + 100 + i)); done
  "$nginx_bin" -t -q -c "$dir/nginx.conf" -p "$dir"
  "$nginx_bin" -c "$dir/nginx.conf" -p "$dir"
  wait_port "$port"
  wait_port $((port + 100))
  echo "fleet up: gRPC on 127.0.0.1:$port, HTTP on 127.0.0.1:$((port + 100)) -> replicas on ports $((port + 1))..$((port + replicas)) (logs in $dir)"
}

case "$cmd" in
  up) up ;;
  down) down; echo "fleet down" ;;
  *) echo "usage: $0 up|down [options] (see the header of this script)" >&2; exit 2 ;;
esac
