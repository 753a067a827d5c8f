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

def build_id() -> str:
    """The build results come from (zonelab's version and commit): part of every cache key."""
def default_cache_dir() -> str:
    """Where sweeps cache their points unless told (XDG_CACHE_HOME/zonelab/sweep)."""

class Sweep:
    """A sweep spec expanded into points (docs/sweep.md)."""
    @staticmethod
    def load(path: str) -> "Sweep":
        """Reads and expands a spec file; ZonelabError names a bad line."""
    @staticmethod
    def from_text(text: str, origin: str) -> "Sweep":
        """Expands a spec's text; origin names it in messages."""
    @property
    def name(self) -> str: ...
    @property
    def origin(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def axes(self) -> List[str]: ...
    @property
    def points(self) -> List[Dict[str, Any]]:
        """index, key, label, coordinates, seed (and member) of each point."""
    def __len__(self) -> int: ...
    def run_point(self, index: int) -> str:
        """Runs one point in this process: its result document as JSON text."""
    def lookup(self, cache_dir: str, index: int) -> Tuple[Optional[str], str]:
        """(the cached result or None, why a damaged entry is unusable or '')."""
    def store(self, cache_dir: str, index: int, result: str) -> None: ...
    def cache_path(self, cache_dir: str, index: int) -> str: ...
    def write(self, out: str, results: List[str]) -> Tuple[str, bool]:
        """Writes NAME.csv and NAME.json: (the JSON's path, whether it can be plotted)."""
