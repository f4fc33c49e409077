"""``docs/user/stores.md``'s store conformance table is what ``scripts/probe_stores.py``
renders from the committed probe results (``scripts/probe_stores.json``), and those results say
what the stores are known to do."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("probe_stores", REPO / "scripts" /
                                                  "probe_stores.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("probe_stores", module)
    spec.loader.exec_module(module)
    return module


def test_the_pages_block_is_what_the_results_render_to() -> None:
    ps = _script()
    block = ps.page_section(ps.PAGE.read_text())
    assert block is not None, "docs/user/stores.md lost its probe markers"
    assert block == ps.current_block(), "stale: run .venv/bin/python scripts/probe_stores.py"


def test_the_block_follows_the_results() -> None:
    """A changed measurement changes the page (the freshness check can fail)."""
    ps = _script()
    data = json.loads(ps.RESULTS.read_text())
    changed = copy.deepcopy(data)
    race = changed["stores"]["local"]["report"]["races"][0]
    race["winners"] = [2, *race["winners"][1:]]
    race["verdict"] = "several winners"
    assert ps.render_block(changed) != ps.render_block(data)
    assert "**several winners**" in ps.render_block(changed)


def test_the_recorded_results_hold_the_known_answers() -> None:
    stores = json.loads(_script().RESULTS.read_text())["stores"]
    assert {"moto-server", "moto-inprocess", "rgw", "local"} <= set(stores)

    def fenced(name: str) -> bool:
        return next(a["safe"] for a in stores[name]["committers"] if a["committer"] == "fenced")

    def verdicts(name: str) -> dict[str, str]:
        return {r["op_name"]: r["verdict"] for r in stores[name]["report"]["races"]}

    assert all(r["writers"] >= 16 for s in stores.values() for r in s["report"]["races"])
    assert verdicts("local") == dict.fromkeys(verdicts("local"), "exclusive")
    assert verdicts("moto-server")["PUT_IF_NONE_MATCH"] == "exclusive"
    assert verdicts("rgw")["PUT_IF_NONE_MATCH"] == "exclusive"
    assert verdicts("rgw")["COMPLETE_IF_NONE_MATCH"] == "several winners"  # ignored there
    assert stores["rgw"]["report"]["sequential"]["complete_if_none_match"] == "no"
    # If-Match on complete: ignored by moto and by RGW (every racer completes), kept by local
    assert set(verdicts("local")) >= {"COMPLETE_IF_MATCH"}
    for name in ("moto-server", "moto-inprocess", "rgw"):
        assert verdicts(name)["COMPLETE_IF_MATCH"] == "several winners", name
        assert stores[name]["report"]["sequential"]["complete_if_match_stale"] == "no", name
    assert fenced("local") and fenced("moto-server") and fenced("rgw")
    # which committer relies on which race: only fenced, only on If-None-Match PUTs
    for store in stores.values():
        relied = {m["op"]: m["relied_on_by"] for m in store["races_for_committers"]}
        assert relied == {"PUT_IF_NONE_MATCH": ["fenced"], "PUT_IF_MATCH": [],
                          "COMPLETE_IF_NONE_MATCH": [], "COMPLETE_IF_MATCH": []}
