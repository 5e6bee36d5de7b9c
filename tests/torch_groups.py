# SPDX-License-Identifier: GPL-2.0-or-later
"""A real client of the rank environment: torch.distributed (gloo) reads
RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT from the environment the plugin set,
builds TP, PP and DP groups from RANK the way Megatron-Core's rank generator
does for the default order tp-cp-ep-dp-pp, and all-reduces the node name
inside each TP group.  Prints one line per rank; the test reads them."""
import datetime
import os
# The TCPStore of torch 2.4 and later asks for libuv by default; Debian 13 builds torch without it.
os.environ.setdefault("USE_LIBUV", "0")

import torch
import torch.distributed as dist


def sizes():
    """tp, cp, dp, pp from the plugin's PARALLEL_LAYOUT_* variables."""
    return [int(os.environ["PARALLEL_LAYOUT_" + a]) for a in ("TP", "CP", "DP", "PP")]


def groups(dims, masked):
    """Megatron's masked orthogonal groups: dims innermost first; members
    vary over the masked axes (first fastest), groups over the others."""
    world = 1
    for d in dims:
        world *= d
    stride = [1]
    for d in dims[:-1]:
        stride.append(stride[-1] * d)
    m_dims = [d for d, m in zip(dims, masked) if m]
    m_str = [s for s, m in zip(stride, masked) if m]
    u_dims = [d for d, m in zip(dims, masked) if not m]
    u_str = [s for s, m in zip(stride, masked) if not m]

    def decompose(i, shape):
        out = []
        for d in shape:
            out.append(i % d)
            i //= d
        return out

    size = 1
    for d in m_dims:
        size *= d
    result = []
    for g in range(world // size):
        base = sum(c * s for c, s in zip(decompose(g, u_dims), u_str))
        result.append([base + sum(c * s for c, s in zip(decompose(k, m_dims), m_str))
                       for k in range(size)])
    return result


def name_tensor(name):
    raw = name.encode()[:32].ljust(32, b"\0")
    return torch.tensor(list(raw), dtype=torch.int64)


def main():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    node = os.environ["SLURMD_NODENAME"]
    dist.init_process_group("gloo", init_method="env://",
                            timeout=datetime.timedelta(seconds=60))
    dims = sizes()
    mine = {}
    # Every rank creates every group in the same order, as Megatron does.
    for axis, mask in (("tp", [1, 0, 0, 0]), ("dp", [0, 0, 1, 0]), ("pp", [0, 0, 0, 1])):
        for members in groups(dims, mask):
            g = dist.new_group(members)
            if rank in members:
                mine[axis] = (members, g)
    tp_members, tp_group = mine["tp"]
    hi = name_tensor(node)
    lo = name_tensor(node)
    dist.all_reduce(hi, op=dist.ReduceOp.MAX, group=tp_group)
    dist.all_reduce(lo, op=dist.ReduceOp.MIN, group=tp_group)
    tp_local = bool(torch.equal(hi, lo) and torch.equal(hi, name_tensor(node)))
    total = torch.tensor([rank + 1])
    dist.all_reduce(total)
    print("rank=%d node=%s local_rank=%s tp_group=%s pp_group=%s dp_group=%s tp_node_local=%s sum_ok=%s"
          % (rank, node, os.environ.get("LOCAL_RANK"), tp_members, mine["pp"][0], mine["dp"][0],
             tp_local, int(total.item()) == world * (world + 1) // 2), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
