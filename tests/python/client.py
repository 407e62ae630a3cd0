#!/usr/bin/env python3
"""A third-party client of the Emergo bot service, in Python with grpcio.

Generates its stubs from proto/ with grpcio-tools (no Rust involved), then runs Analyze, BestMove
and one bad-input case against a running server. Exits non-zero on any failure.

Usage: client.py HOST:PORT PROTO_DIR
"""
import os
import sys
import tempfile

import grpc
from grpc_tools import protoc

INITIAL = "9/9/9/9/9/9/9/9/9 w 0 12,12"


def generate_stubs(proto_dir: str, out_dir: str) -> None:
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    rc = protoc.main([
        "grpc_tools.protoc",
        f"-I{proto_dir}",
        f"-I{include}",
        f"--python_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        "emergo/bot/v1/bot.proto",
    ])
    if rc != 0:
        raise SystemExit(f"protoc failed with {rc}")


def check(cond: bool, what: str) -> None:
    if not cond:
        raise SystemExit(f"FAILED: {what}")


def main() -> None:
    addr, proto_dir = sys.argv[1], sys.argv[2]
    out = tempfile.mkdtemp(prefix="emergo-py-")
    generate_stubs(proto_dir, out)
    sys.path.insert(0, out)
    from emergo.bot.v1 import bot_pb2 as pb, bot_pb2_grpc as rpc  # noqa: E402

    with grpc.insecure_channel(addr) as channel:
        stub = rpc.EmergoBotStub(channel)

        def legal_line(moves):
            """True when the moves play legally from the start (asked of the server's rules)."""
            r = stub.ApplyMoves(pb.ApplyMovesRequest(fen=INITIAL, moves=moves))
            return r.ok

        updates = list(stub.Analyze(pb.AnalyzeRequest(
            position=pb.Position(fen=INITIAL, moves=["a1"]),
            limits=pb.Limits(max_time_ms=500),
            options=pb.SearchOptions(multi_pv=2, exhaustive=True),
            report_interval_ms=50,
        ), timeout=10))
        check(len(updates) >= 3, f"at least 2 streamed updates and a final one, got {len(updates)}")
        final = updates[-1]
        check(final.final and all(not u.final for u in updates[:-1]), "exactly one final update, last")
        check(final.stop_reason == pb.STOP_REASON_TIME, f"stop reason {final.stop_reason}")
        for u in updates:
            for m in u.moves[:2]:
                check(len(m.pv) >= 1 and m.pv[0] == m.move, f"PV starts with its move: {m}")
                check(legal_line(["a1"] + list(m.pv)), f"PV {list(m.pv)} is legal")
        print(f"Analyze: {len(updates)} updates, best {final.best_move}, "
              f"{final.stats.playouts} playouts, PV {' '.join(final.moves[0].pv)}")

        best = stub.BestMove(pb.BestMoveRequest(
            position=pb.Position(fen=INITIAL),
            limits=pb.Limits(max_playouts=2000),
            options=pb.SearchOptions(seed=3),
        ), timeout=10)
        check(best.best_move != "" and legal_line([best.best_move]), f"legal best move {best.best_move}")
        check(best.best_move != "e5", "White may not open on e5")
        print(f"BestMove: {best.best_move}")

        try:
            stub.BestMove(pb.BestMoveRequest(
                position=pb.Position(fen="9/9/9/9/9/9/9/9/1A@7 w 0 12,12"),
                limits=pb.Limits(max_time_ms=100),
            ), timeout=10)
            check(False, "a bad FEN must be refused")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.INVALID_ARGUMENT, f"code {e.code()}")
            check("position.fen" in e.details() and "b1" in e.details(), f"message {e.details()}")
            print(f"bad input: {e.code().name}: {e.details()}")
    print("python client: OK")


if __name__ == "__main__":
    main()
