"""mbarrier phases and transaction counts, cluster special registers, DSMEM and barrier.cluster."""

import pytest

from ptxsim import SimDevice, SimError
from tests.sim_ptx import CLUSTER, HEAD90, MBARRIER, run_kernel

pytestmark = pytest.mark.reference


def test_mbarrier_phases_and_transaction_bytes():
    out = run_kernel(SimDevice(), MBARRIER, "mbar", 128 * 4).reshape(128, 4)
    # all 128 threads arrive in one lock step: the token's phase has completed at once
    assert out[:, 0].tolist() == [1] * 128
    assert out[:, 1].tolist() == [0] * 128            # try_wait.parity 0 needed no spin
    assert out[:, 2].tolist() == [0] * 128            # phase of parity 1 not complete
    # the consumers of bar1 spin until warp 1 lane 0 (later in the program) completes the 64 bytes
    spins = out[:, 3].tolist()
    assert spins[32] == 0
    assert all(1 <= s < 1000 for i, s in enumerate(spins) if i != 32)


def test_mbarrier_used_before_init_is_an_error():
    ptx = HEAD90 + r"""
.visible .entry k()
{
    .reg .pred %p<1>;
    .shared .align 8 .b64 bar;
    mbarrier.try_wait.parity.shared::cta.b64 %p0, [bar], 0;
    ret;
}
"""
    dev = SimDevice()
    with pytest.raises(SimError, match="no mbarrier.init"):
        dev.run(dev.load(ptx), "k", [], (1, 1, 1), (32, 1, 1))


def test_cluster_registers_and_distributed_shared_memory():
    out = run_kernel(SimDevice(batch_clusters=1), CLUSTER, "cluster", 4 * 64 * 12, grid=(4, 1, 1),
                     block=(64, 1, 1)).reshape(4, 64, 12)
    for cta in range(4):
        rank = cta % 2
        for t in range(64):
            expect = [cta, rank, cta // 2, 2, 2, rank, t % 32, 4,
                      (rank ^ 1) * 1000 + t,              # written by the peer through mapa + st.shared::cluster
                      0x400 + 4 * t, 0, 0]
            assert out[cta, t].tolist() == expect, f"CTA {cta} thread {t}"


def test_cluster_launch_must_match_reqnctapercluster():
    dev = SimDevice()
    with pytest.raises(SimError, match="reqnctapercluster"):
        run_kernel(dev, CLUSTER, "cluster", 64, grid=(4, 1, 1), block=(64, 1, 1), cluster=(4, 1, 1))
