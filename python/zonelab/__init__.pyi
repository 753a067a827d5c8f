"""Type hints for zonelab's extension module (src/python/module.cc)."""
from typing import Any, Dict, List, Mapping, Optional, Tuple

class ZonelabError(RuntimeError):
    """A refused input or a device that cannot do it; the message is one line."""

class Device:
    """An open image or a throwaway device, in virtual time."""

    @property
    def info(self) -> Dict[str, Any]:
        """interface, lba_size, zone_count, zone_size_lbas, zone_capacity_lbas,
        capacity_lbas, max_open, max_active, stores_data."""
    @property
    def now_ns(self) -> int:
        """The device's virtual time."""
    def zones(self, first: int = 0, count: Optional[int] = None) -> List[Dict[str, Any]]:
        """The zone report: zone, start, capacity, wp (LBAs) and state."""
    def write(self, lba: int, data: bytes, append: bool = False) -> Dict[str, Any]:
        """Writes whole LBAs; {status, latency_ns} (and lba for an append)."""
    def read(self, lba: int, blocks: int) -> Tuple[Dict[str, Any], bytes]:
        """Reads `blocks` LBAs: ({status, latency_ns}, data)."""
    def zone_action(self, zone: int, action: str) -> Dict[str, Any]:
        """open, close, finish, reset or offline."""
    def deallocate(self, lba: int, blocks: int) -> Dict[str, Any]:
        """Trim."""
    def flush(self) -> Dict[str, Any]:
        """Flush."""
    def counters(self) -> Dict[str, Any]:
        """Host and flash bytes, erases, write amplification, busy fractions."""
    def bench(self, job: str) -> Dict[str, Any]:
        """Runs a bench job file (TOML text) in virtual time: jobs[], device, ..."""
    def replay(self, trace: str, timestamps: bool = True, iodepth: int = 32) -> Dict[str, Any]:
        """Replays a fio iolog or blkparse text file (docs/replay.md)."""
    def close(self) -> None:
        """Saves the image's state and releases it (also at the end of `with`)."""
    def __enter__(self) -> "Device": ...
    def __exit__(self, *args: Any) -> None: ...

def presets() -> List[str]:
    """The shipped presets' names."""
def create(path: str, preset: str = "small", settings: Mapping[str, str] = ...,
           force: bool = False) -> Device:
    """Makes a device image and returns it open."""
def open(path: str, read_only: bool = False, scheduler: str = "") -> Device:
    """Opens and locks a device image."""
def device(preset: str = "small", settings: Mapping[str, str] = ...,
           scheduler: str = "") -> Device:
    """A throwaway device of a preset (no image)."""
