"""zonelab from Python: ZNS and conventional SSD models in virtual time.

    import zonelab
    with zonelab.create("dev.img", preset="small") as dev:
        dev.write(0, b"\\0" * 4096)
        print(dev.zones(0, 2), dev.counters()["host_write_bytes"])

Everything runs in this process through the same stack as the `zonelab`
command; results are plain dicts, as `--json` gives them. docs/python.md
lists the API; zonelab.sweep runs parameter sweeps on Dask (docs/sweep.md).
"""
from ._zonelab import (Device, Sweep, ZonelabError, build_id, create, default_cache_dir, device,
                       open, presets)

__all__ = ["Device", "Sweep", "ZonelabError", "build_id", "create", "default_cache_dir", "device",
           "open", "presets", "sweep"]
