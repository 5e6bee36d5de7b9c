/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of the node readers (hwloc XML, `nvidia-smi topo -m`, NCCL topology
 * XML) on the real inputs in tests/data.  Expected values were worked out by
 * reading each file by hand (bus ids, NUMA nodes, matrix cells); see the
 * comments by each check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "topo.h"

static const char *data;

static const char *
data_path(const char *sub)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf), "%s/%s", data, sub);
	return buf;
}

/* The whole of a file, NUL-terminated; caller frees.  NULL on failure. */
static char *
read_all(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)len + 1);
		if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
			free(buf);
			buf = NULL;
		}
		if (buf) {
			buf[len] = '\0';
			if (lenp)
				*lenp = (size_t)len;
		}
	}
	fclose(f);
	return buf;
}

static char tmp_path[512];

/* Write len bytes to a fresh temporary file named in tmp_path; 0 or -1. */
static int
write_temp(const char *text, size_t len)
{
	const char *dir = getenv("TMPDIR");
	FILE *f;
	int fd;

	snprintf(tmp_path, sizeof(tmp_path), "%s/topo_node_test.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(tmp_path);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "wb");
	if (!f) {
		close(fd);
		unlink(tmp_path);
		return -1;
	}
	if (fwrite(text, 1, len, f) != len) {
		fclose(f);
		unlink(tmp_path);
		return -1;
	}
	fclose(f);
	return 0;
}

/* "a,b,c" of one int field of every GPU, for compact checks. */
static const char *
gpu_list(const struct topo_nodetype *t, char what)
{
	static char buf[1024];
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < t->ngpus && len + 16 < sizeof(buf); i++) {
		const struct topo_gpu *g = &t->gpus[i];
		int v = what == 'n' ? g->numa : what == 'i' ? g->island : what == 'c' ? g->nic :
			g->index;

		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d", i ? "," : "", v);
	}
	return buf;
}

static const char *
nic_list(const struct topo_nodetype *t, char what)
{
	static char buf[2048];
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < t->nnics && len + 80 < sizeof(buf); i++) {
		const struct topo_nic *n = &t->nics[i];

		if (what == 's')
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "," : "",
						n->name);
		else if (what == 'p')
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "," : "",
						n->pci);
		else
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d", i ? "," : "",
						what == 'n' ? n->numa : what == 'r' ? n->rail : n->port);
	}
	return buf;
}

static const char *
gpu_pcis(const struct topo_nodetype *t)
{
	static char buf[2048];
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < t->ngpus && len + 32 < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "," : "",
					t->gpus[i].pci);
	return buf;
}

/* ---------------- hwloc ---------------- */

static int
hw(struct topo_nodetype *t, const char *file, pl_err_t *err)
{
	memset(t, 0, sizeof(*t));
	pl_err_clear(err);
	return topo_read_hwloc(t, data_path(file), err);
}

static void
test_hwloc_g4dn(void)
{
	struct topo_nodetype t;
	pl_err_t err;

	is_int(hw(&t, "hwloc/g4dnmetal.xml", &err), 0, "g4dn.metal: reads (%s)", err.text);
	is_str(t.name, "g4dn.metal", "g4dn.metal: named from DMIProductName");
	is_int(t.ngpus, 8, "g4dn.metal: 8 T4 GPUs (cuda/nvml/opencl deduplicated by PCI)");
	is_str(gpu_list(&t, 'x'), "0,1,2,3,4,5,6,7", "g4dn.metal: indexes");
	is_str(gpu_pcis(&t),
	       "0000:18:00.0,0000:19:00.0,0000:35:00.0,0000:36:00.0,0000:e7:00.0,0000:e8:00.0,0000:f4:00.0,0000:f5:00.0",
	       "g4dn.metal: GPU bus ids");
	/* Packages with nodeset 0x1 hold the first four, 0x2 the others. */
	is_str(gpu_list(&t, 'n'), "0,0,0,0,1,1,1,1", "g4dn.metal: NUMA split 4+4");
	is_str(gpu_list(&t, 'i'), "-1,-1,-1,-1,-1,-1,-1,-1", "g4dn.metal: no NVLink");
	is_str(t.ngpus ? t.gpus[0].name : "", "Tesla T4", "g4dn.metal: GPU model");
	/* CUDAGlobalMemorySize 15472384 kB * 1024 */
	is_double(t.gpu_memory_gb, 15.843721216, 1e-9, "g4dn.metal: GPU memory");
	is_int(t.nnics, 1, "g4dn.metal: one OpenFabrics device (EFA)");
	is_str(nic_list(&t, 's'), "rdmap197s0", "g4dn.metal: EFA name");
	is_str(nic_list(&t, 'p'), "0000:c5:00.0", "g4dn.metal: EFA bus id");
	is_str(nic_list(&t, 'n'), "1", "g4dn.metal: EFA on NUMA 1");
	is_str(nic_list(&t, 'o'), "1", "g4dn.metal: Port1State active -> port 1");
	is_str(gpu_list(&t, 'c'), "0,0,0,0,0,0,0,0", "g4dn.metal: every GPU uses the one NIC");
	is_str(nic_list(&t, 'r'), "-1", "g4dn.metal: one NIC for 8 GPUs is no rail layout");
	topo_nodetype_clear(&t);
}

static void
test_hwloc_dgx2(void)
{
	struct topo_nodetype t;
	pl_err_t err;

	is_int(hw(&t, "hwloc/nvidiaDGX2.xml", &err), 0, "DGX-2: reads (%s)", err.text);
	is_str(t.name, "NVIDIA DGX-2H", "DGX-2: name");
	is_int(t.ngpus, 16, "DGX-2: 16 GPUs from nvml OS devices without subtype");
	is_str(gpu_list(&t, 'x'), "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15", "DGX-2: nvml indexes");
	is_str(gpu_list(&t, 'n'), "0,0,0,0,0,0,0,0,1,1,1,1,1,1,1,1", "DGX-2: NUMA");
	/* Each board's 8 GPUs link to its 6 NVSwitches; the switches are one fabric. */
	is_str(gpu_list(&t, 'i'), "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0", "DGX-2: one island");
	is_str(t.ngpus ? t.gpus[0].pci : "", "0000:34:00.0", "DGX-2: GPU 0 bus id");
	is_str(t.ngpus ? t.gpus[15].pci : "", "0000:e7:00.0", "DGX-2: GPU 15 bus id");
	is_int(t.nnics, 0, "DGX-2: no NIC in this export");
	is_str(gpu_list(&t, 'c'), "-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1",
	       "DGX-2: no closest NIC");
	is_double(t.gpu_memory_gb, 0, 0, "DGX-2: memory unknown (no CUDA info)");
	topo_nodetype_clear(&t);
}

static void
test_hwloc_power8(void)
{
	struct topo_nodetype t;
	pl_err_t err;

	is_int(hw(&t, "hwloc/power8gpudistances.xml", &err), 0, "POWER8: reads (%s)", err.text);
	is_int(t.ngpus, 4, "POWER8: 4 P100 (cuda+nvml+opencl per GPU)");
	is_str(gpu_pcis(&t), "0002:01:00.0,0003:01:00.0,000a:01:00.0,000b:01:00.0",
	       "POWER8: bus ids");
	is_str(gpu_list(&t, 'n'), "0,0,1,1", "POWER8: NUMA");
	/* Matrix rows: GPU0-GPU1 40000, GPU2-GPU3 40000; GPU-Package links do not join. */
	is_str(gpu_list(&t, 'i'), "0,0,1,1", "POWER8: two NVLink pairs");
	is_str(t.name, "Tesla P100-SXM2-16GB", "POWER8: no DMI, named by GPU model");
	is_double(t.gpu_memory_gb, 17.071734784, 1e-9, "POWER8: 16671616 kB");
	topo_nodetype_clear(&t);
}

static void
test_hwloc_lassen(void)
{
	struct topo_nodetype t;
	pl_err_t err;
	int v;

	for (v = 0; v < 2; v++) {
		const char *f = v ? "hwloc/coral-lassen-hwloc1.xml" : "hwloc/coral-lassen.xml";
		const char *tag = v ? "Lassen v1" : "Lassen v2";

		is_int(hw(&t, f, &err), 0, "%s: reads (%s)", tag, err.text);
		is_int(t.ngpus, 4, "%s: 4 V100", tag);
		is_str(gpu_pcis(&t), "0004:04:00.0,0004:05:00.0,0035:03:00.0,0035:04:00.0",
		       "%s: GPU bus ids", tag);
		/* Sockets are NUMA 0 and 8; GPU memory nodes 252-255 have no CPUs. */
		is_str(gpu_list(&t, 'n'), "0,0,8,8", "%s: NUMA", tag);
		/* The export has no NVLinkBandwidth matrix, so hwloc cannot tell. */
		is_str(gpu_list(&t, 'i'), "-1,-1,-1,-1", "%s: no NVLink information", tag);
		is_int(t.nnics, 4, "%s: 4 ConnectX-5 ports", tag);
		is_str(nic_list(&t, 's'), "mlx5_0,mlx5_1,mlx5_2,mlx5_3", "%s: NIC names", tag);
		is_str(nic_list(&t, 'p'), "0003:01:00.0,0003:01:00.1,0033:01:00.0,0033:01:00.1",
		       "%s: NIC bus ids", tag);
		is_str(nic_list(&t, 'n'), "0,0,8,8", "%s: NIC NUMA", tag);
		/* Two NICs per socket, equally close: one each. */
		is_str(gpu_list(&t, 'c'), "0,1,2,3", "%s: GPU->NIC spread within the socket", tag);
		is_str(nic_list(&t, 'r'), "0,1,2,3", "%s: rails", tag);
		if (v) {
			is_str(t.gpus[0].name, "", "%s: no model in a v1 export", tag);
			is_str(t.name, "", "%s: nothing to name it by", tag);
			is_double(t.gpu_memory_gb, 0, 0, "%s: memory unknown", tag);
		} else {
			is_str(t.gpus[0].name, "Tesla V100-SXM2-16GB", "%s: model", tag);
			is_double(t.gpu_memory_gb, 16.911433728, 1e-9, "%s: 16515072 kB", tag);
		}
		topo_nodetype_clear(&t);
	}
}

static void
test_hwloc_amd(void)
{
	struct topo_nodetype t;
	pl_err_t err;

	is_int(hw(&t, "hwloc/eas-tioga.xml", &err), 0, "Tioga: reads (%s)", err.text);
	is_str(t.name, "HPE_CRAY_EX235A", "Tioga: name");
	is_int(t.ngpus, 8, "Tioga: 8 MI250X GCDs (rsmi0-7)");
	is_str(gpu_pcis(&t),
	       "0000:c1:00.0,0000:c6:00.0,0000:c9:00.0,0000:ce:00.0,0000:d1:00.0,0000:d6:00.0,0000:d9:00.0,0000:de:00.0",
	       "Tioga: bus ids in rsmi order");
	is_str(gpu_list(&t, 'n'), "3,3,1,1,0,0,2,2", "Tioga: GCD NUMA");
	/* XGMIBandwidth is 100000 between every pair of GCDs. */
	is_str(gpu_list(&t, 'i'), "0,0,0,0,0,0,0,0", "Tioga: one xGMI island");
	is_str(t.gpus[0].name, "AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2", "Tioga: model");
	is_double(t.gpu_memory_gb, 68.70269952, 1e-9, "Tioga: RSMIVRAMSize 67092480 kB");
	is_str(nic_list(&t, 's'), "hsi0,hsi1,hsi2,hsi3", "Tioga: Slingshot NICs");
	is_str(nic_list(&t, 'n'), "3,1,0,2", "Tioga: NIC NUMA");
	is_str(nic_list(&t, 'o'), "0,0,0,0", "Tioga: port unknown");
	is_str(gpu_list(&t, 'c'), "0,0,1,1,2,2,3,3", "Tioga: two GCDs per NIC");
	is_str(nic_list(&t, 'r'), "-1,-1,-1,-1", "Tioga: no one-to-one rails");
	topo_nodetype_clear(&t);

	is_int(hw(&t, "hwloc/epyc-corona-p2.xml", &err), 0, "Corona: reads (%s)", err.text);
	is_int(t.ngpus, 8, "Corona: 8 MI50 (rsmi; opencl duplicates dropped)");
	is_str(gpu_pcis(&t),
	       "0000:63:00.0,0000:43:00.0,0000:03:00.0,0000:27:00.0,0000:e3:00.0,0000:c3:00.0,0000:83:00.0,0000:a3:00.0",
	       "Corona: bus ids in rsmi order");
	is_str(gpu_list(&t, 'n'), "0,0,0,0,1,1,1,1", "Corona: NUMA");
	is_str(gpu_list(&t, 'i'), "-1,-1,-1,-1,-1,-1,-1,-1", "Corona: no xGMI matrix");
	is_str(t.gpus[0].name, "deon Instinct MI50 32GB", "Corona: model as RSMI wrote it");
	is_double(t.gpu_memory_gb, 34.342961152, 1e-9, "Corona: OpenCL 33538048 kB");
	is_str(nic_list(&t, 's'), "mlx5_0", "Corona: NIC");
	is_str(nic_list(&t, 'n'), "1", "Corona: NIC on NUMA 1");
	is_str(gpu_list(&t, 'c'), "0,0,0,0,0,0,0,0", "Corona: all use mlx5_0");
	is_str(t.name, "AS -4124GS-TNR-CGP-MT037", "Corona: name");
	topo_nodetype_clear(&t);
}

static void
test_hwloc_misc(void)
{
	struct topo_nodetype t;
	pl_err_t err;

	is_int(hw(&t, "hwloc/32em64t-2n8c2t-pci-wholeio.xml", &err), 0, "wholeio: reads (%s)",
	       err.text);
	/* Three NVIDIA PCI functions, but only the K40m has a CUDA device. */
	is_int(t.ngpus, 1, "wholeio: cuda0 only");
	is_str(t.ngpus ? t.gpus[0].pci : "", "0000:84:00.0", "wholeio: cuda0 bus id");
	is_str(t.ngpus ? t.gpus[0].name : "", "Tesla K40m", "wholeio: model");
	is_str(gpu_list(&t, 'n'), "1", "wholeio: GPU on NUMA 1");
	is_double(t.gpu_memory_gb, 12.079136768, 1e-9, "wholeio: 11796032 kB");
	is_str(nic_list(&t, 's'), "mlx5_0", "wholeio: mlx5_0");
	is_str(nic_list(&t, 'p'), "0000:04:00.0", "wholeio: NIC bus id");
	is_str(nic_list(&t, 'n'), "1", "wholeio: NIC on NUMA 1 as well");
	is_str(gpu_list(&t, 'c'), "0", "wholeio: GPU -> mlx5_0");
	is_str(nic_list(&t, 'r'), "0", "wholeio: one GPU, one NIC: rail 0");
	is_str(t.name, "X9DRG-HF", "wholeio: name");
	topo_nodetype_clear(&t);

	is_int(hw(&t, "hwloc/cts1-quartz-smt1.xml", &err), 0, "Quartz: reads (%s)", err.text);
	is_int(t.ngpus, 0, "Quartz: no GPU");
	is_str(nic_list(&t, 's'), "hfi1_0", "Quartz: Omni-Path HFI");
	is_str(nic_list(&t, 'n'), "1", "Quartz: HFI on NUMA 1");
	is_str(nic_list(&t, 'r'), "-1", "Quartz: no rails without GPUs");
	is_str(t.name, "Relion 2900e", "Quartz: name");
	topo_nodetype_clear(&t);

	is_int(hw(&t, "hwloc/epyc-dual-sock-hwloc1.xml", &err), 0, "EPYC v1: reads (%s)",
	       err.text);
	is_int(t.ngpus, 0, "EPYC v1: no GPU (the ASPEED VGA is not NVIDIA)");
	is_str(nic_list(&t, 's'), "mlx5_0", "EPYC v1: NIC");
	is_str(nic_list(&t, 'n'), "5", "EPYC v1: NIC on NUMA 5 of 8");
	is_str(t.name, "Super Server", "EPYC v1: name");
	topo_nodetype_clear(&t);
}

/* Variants of a real file: placeholder DMI name, a second active port, cut short. */
static void
test_hwloc_edits(void)
{
	struct topo_nodetype t;
	pl_err_t err;
	size_t len = 0;
	char *text = read_all(data_path("hwloc/32em64t-2n8c2t-pci-wholeio.xml"), &len);
	char *edit = NULL;
	const char *dmi = "value=\"X9DRG-HF\"/>\n    <info name=\"DMIProductVersion\"";
	const char *port = "<info name=\"Port1State\" value=\"4\"/>";
	char *at;

	pl_err_clear(&err);
	if (!ok(text != NULL, "wholeio: read for edits"))
		return;
	edit = malloc(len + 256);
	at = strstr(text, dmi);
	if (ok(edit && at, "wholeio: DMIProductName found")) {
		/* Same length, so the rest of the file is unchanged. */
		size_t off = (size_t)(at - text);

		sprintf(edit, "%.*svalue=\"None\"/>%s", (int)off, text,
			at + strlen("value=\"X9DRG-HF\"/>"));
		if (write_temp(edit, strlen(edit)) == 0) {
			memset(&t, 0, sizeof(t));
			is_int(topo_read_hwloc(&t, tmp_path, &err), 0, "placeholder DMI: reads (%s)",
			       err.text);
			is_str(t.name, "Tesla K40m", "placeholder DMI: named by GPU model");
			topo_nodetype_clear(&t);
			unlink(tmp_path);
		}
	}
	at = strstr(text, port);
	if (edit && ok(at != NULL, "wholeio: Port1State found")) {
		size_t off = (size_t)(at - text);

		sprintf(edit, "%.*s<info name=\"Port1State\" value=\"1\"/><info name=\"Port2State\" value=\"4\"/>%s",
			(int)off, text, at + strlen(port));
		if (write_temp(edit, strlen(edit)) == 0) {
			memset(&t, 0, sizeof(t));
			is_int(topo_read_hwloc(&t, tmp_path, &err), 0, "two ports: reads (%s)", err.text);
			is_str(nic_list(&t, 'o'), "2", "two ports: the active one (2) is used");
			topo_nodetype_clear(&t);
			unlink(tmp_path);
		}
	}
	free(edit);
	free(text);
}

static void
test_hwloc_bad_files(void)
{
	struct topo_nodetype t;
	pl_err_t err;
	size_t len = 0;
	char *text = read_all(data_path("hwloc/32em64t-2n8c2t-pci-wholeio.xml"), &len);

	if (text && write_temp(text, len / 2) == 0) {
		memset(&t, 0, sizeof(t));
		pl_err_clear(&err);
		is_int(topo_read_hwloc(&t, tmp_path, &err), -1, "truncated hwloc XML: error");
		like(err.text, "truncated", "truncated hwloc XML: says so");
		like(err.text, tmp_path, "truncated hwloc XML: names the file");
		is_int(t.ngpus + t.nnics, 0, "truncated hwloc XML: nothing filled");
		unlink(tmp_path);
	}
	if (write_temp("", 0) == 0) {
		memset(&t, 0, sizeof(t));
		pl_err_clear(&err);
		is_int(topo_read_hwloc(&t, tmp_path, &err), -1, "empty hwloc XML: error");
		like(err.text, "no <topology> element", "empty hwloc XML: says what is missing");
		unlink(tmp_path);
	}
	{
		static const char junk[] = "<topology version=\"2.0\">\xff\xfe not xml at all </topology>";

		if (write_temp(junk, sizeof(junk) - 1) == 0) {
			memset(&t, 0, sizeof(t));
			pl_err_clear(&err);
			is_int(topo_read_hwloc(&t, tmp_path, &err), -1, "junk hwloc XML: error");
			like(err.text, "hwloc", "junk hwloc XML: hwloc refused it (%s)", err.text);
			unlink(tmp_path);
		}
	}
	memset(&t, 0, sizeof(t));
	pl_err_clear(&err);
	is_int(topo_read_hwloc(&t, data_path("hwloc/no-such-file.xml"), &err), -1,
	       "missing hwloc XML: error");
	like(err.text, "no-such-file.xml", "missing hwloc XML: names the file");
	free(text);
}

static void
test_hwloc_live(void)
{
	struct topo_nodetype t;
	pl_err_t err;
	int i, ok_idx = 1;

	memset(&t, 0, sizeof(t));
	pl_err_clear(&err);
	is_int(topo_read_hwloc(&t, NULL, &err), 0, "live discovery runs (%s)", err.text);
	ok(t.ngpus >= 0 && t.nnics >= 0, "live discovery: %d GPUs, %d NICs", t.ngpus, t.nnics);
	for (i = 1; i < t.ngpus; i++)
		ok_idx &= t.gpus[i].index > t.gpus[i - 1].index;
	ok(ok_idx, "live discovery: GPUs sorted by index");
	topo_nodetype_clear(&t);
}

/* ---------------- nvidia-smi topo -m ---------------- */

static int
smi(struct topo_nodetype *t, const char *file, pl_err_t *err)
{
	char path[256];

	snprintf(path, sizeof(path), "nvidia-smi-topo/%s", file);
	memset(t, 0, sizeof(*t));
	pl_err_clear(err);
	return topo_read_nvsmi(t, data_path(path), err);
}

static int
smi_text(struct topo_nodetype *t, const char *text, pl_err_t *err)
{
	memset(t, 0, sizeof(*t));
	pl_err_clear(err);
	return topo_read_nvsmi_text(t, text, "paste", err);
}

static void
test_nvsmi_files(void)
{
	struct topo_nodetype t;
	pl_err_t err;

	is_int(smi(&t, "dgx1-v100_8gpu_mlx5_oneflow-dlperf.txt", &err), 0, "oneflow DGX-1: reads (%s)",
	       err.text);
	is_int(t.ngpus, 8, "oneflow DGX-1: 8 GPUs");
	/* Hybrid cube mesh: GPU0-3 and GPU4-7 quads joined by NV2 0-4, 1-5 and NV1 2-6, 3-7. */
	is_str(gpu_list(&t, 'i'), "0,0,0,0,0,0,0,0", "oneflow DGX-1: one NVLink island");
	is_str(gpu_list(&t, 'n'), "-1,-1,-1,-1,-1,-1,-1,-1", "oneflow DGX-1: old header, NUMA unknown");
	is_str(nic_list(&t, 's'), "mlx5_0", "oneflow DGX-1: NIC named by its column");
	is_str(gpu_list(&t, 'c'), "0,0,0,0,0,0,0,0", "oneflow DGX-1: all GPUs use mlx5_0");
	is_str(nic_list(&t, 'r'), "-1", "oneflow DGX-1: no rails");
	is_str(nic_list(&t, 'n'), "-1", "oneflow DGX-1: NIC NUMA unknown");
	topo_nodetype_clear(&t);

	is_int(smi(&t, "dgx1-v100_8gpu_2nic_tabs_hugectr-dlperf.txt", &err), 0,
	       "HugeCTR DGX-1 (messy tabs): reads (%s)", err.text);
	is_int(t.ngpus, 8, "HugeCTR: 8 GPUs");
	is_str(gpu_list(&t, 'i'), "0,0,0,0,0,0,0,0", "HugeCTR: one island");
	is_str(gpu_list(&t, 'n'), "0,0,0,0,1,1,1,1", "HugeCTR: NUMA Affinity column");
	is_str(nic_list(&t, 's'), "mlx5_0,mlx5_1", "HugeCTR: 2 NICs");
	/* GPU0/1: NODE to mlx5_0, SYS to mlx5_1; GPU2/3 PIX mlx5_0; GPU4/5 NODE and GPU6/7 PIX mlx5_1. */
	is_str(gpu_list(&t, 'c'), "0,0,0,0,1,1,1,1", "HugeCTR: closest NICs");
	is_str(nic_list(&t, 'n'), "0,1", "HugeCTR: NIC NUMA from their PIX GPUs");
	is_str(nic_list(&t, 'r'), "-1,-1", "HugeCTR: 4 GPUs per NIC, no rails");
	topo_nodetype_clear(&t);

	is_int(smi(&t, "dgx1-v100-32gb_8gpu_1socket_paddle-fleetx.txt", &err), 0,
	       "FleetX DGX-1: reads (%s)", err.text);
	is_int(t.ngpus, 8, "FleetX: 8 GPUs (header not indented)");
	is_str(gpu_list(&t, 'i'), "0,0,0,0,0,0,0,0", "FleetX: one island");
	is_str(nic_list(&t, 's'), "mlx5_0", "FleetX: NIC");
	is_str(gpu_list(&t, 'c'), "0,0,0,0,0,0,0,0", "FleetX: every GPU NODE to mlx5_0");
	topo_nodetype_clear(&t);

}

static void
test_nvsmi_files_nvswitch(void)
{
	struct topo_nodetype t;
	pl_err_t err;

	is_int(smi(&t, "hgx-h100_8gpu_nv18.txt", &err), 0, "HGX H100: reads (%s)", err.text);
	is_int(t.ngpus, 8, "HGX H100: 8 GPUs");
	is_str(gpu_list(&t, 'i'), "0,0,0,0,0,0,0,0", "HGX H100: one NV18 island of 8");
	is_str(gpu_list(&t, 'n'), "0,0,0,0,1,1,1,1", "HGX H100: NUMA");
	is_int(t.nnics, 0, "HGX H100: no NIC columns");
	is_str(gpu_list(&t, 'c'), "-1,-1,-1,-1,-1,-1,-1,-1", "HGX H100: no closest NIC");
	topo_nodetype_clear(&t);

	is_int(smi(&t, "pcie-8gpu_2numa_sys-only_tabs.txt", &err), 0, "PCIe SYS-only: reads (%s)",
	       err.text);
	is_int(t.ngpus, 8, "PCIe SYS-only: 8 GPUs");
	is_str(gpu_list(&t, 'i'), "-1,-1,-1,-1,-1,-1,-1,-1", "PCIe SYS-only: no island");
	is_str(gpu_list(&t, 'n'), "0,0,0,0,1,1,1,1", "PCIe SYS-only: NUMA");
	topo_nodetype_clear(&t);

	is_int(smi(&t, "hgx-b300_8gpu_9nic-bond_tabs_sglang-issue.txt", &err), 0,
	       "HGX B300: reads (%s)", err.text);
	is_int(t.ngpus, 8, "B300: 8 GPUs (header behind [4m)");
	is_str(gpu_list(&t, 'i'), "0,0,0,0,0,0,0,0", "B300: one island");
	is_str(gpu_list(&t, 'n'), "0,0,0,0,1,1,1,1", "B300: NUMA");
	is_int(t.nnics, 9, "B300: 9 NICs");
	is_str(nic_list(&t, 's'),
	       "mlx5_10,mlx5_11,mlx5_12,mlx5_13,mlx5_14,mlx5_15,mlx5_16,mlx5_17,mlx5_bond_0",
	       "B300: names from the NIC Legend");
	/* GPUk is PXB to NICk; the bond is NODE to GPU4-7, never closest. */
	is_str(gpu_list(&t, 'c'), "0,1,2,3,4,5,6,7", "B300: GPUk -> NICk");
	is_str(nic_list(&t, 'r'), "0,1,2,3,4,5,6,7,-1", "B300: rails 0-7, bond none");
	is_str(nic_list(&t, 'n'), "0,0,0,0,1,1,1,1,1", "B300: NIC NUMA from their GPUs");
	is_str(nic_list(&t, 'o'), "0,0,0,0,0,0,0,0,0", "B300: ports unknown");
	topo_nodetype_clear(&t);

	is_int(smi(&t, "aws-p4d.24xlarge_a100_8gpu_nv12_tabs.txt", &err), 0, "p4d: reads (%s)",
	       err.text);
	is_int(t.ngpus, 8, "p4d: 8 GPUs");
	is_str(gpu_list(&t, 'i'), "0,0,0,0,0,0,0,0", "p4d: one NV12 island");
	is_str(gpu_list(&t, 'n'), "0,0,0,0,1,1,1,1", "p4d: NUMA");
	is_int(t.nnics, 0, "p4d: EFA not shown");
	topo_nodetype_clear(&t);

	is_int(smi(&t, "aws-g6e.12xlarge_l40s_4gpu_node-only.txt", &err), 0, "g6e: reads (%s)",
	       err.text);
	is_int(t.ngpus, 4, "g6e: 4 GPUs after the prompt line");
	is_str(gpu_list(&t, 'i'), "-1,-1,-1,-1", "g6e: no NVLink");
	is_str(gpu_list(&t, 'n'), "0,0,0,0", "g6e: NUMA 0");
	is_str(gpu_list(&t, 'x'), "0,1,2,3", "g6e: indexes");
	is_str(t.name, "", "g6e: nvidia-smi names no model");
	topo_nodetype_clear(&t);
}

static void
test_nvsmi_text(void)
{
	struct topo_nodetype t;
	pl_err_t err;

	/* Real ESC bytes, two NVLink pairs, old SOC cells, two equally close NICs. */
	is_int(smi_text(&t,
			"\033[4m\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\033[0m\n"
			"GPU0\t X \tNV2\tSOC\tSOC\tPHB\tPHB\t0-7\t0\n"
			"GPU1\tNV2\t X \tSOC\tSOC\tPHB\tPHB\t0-7\t0\n"
			"GPU2\tSOC\tSOC\t X \tNV4\tSOC\tSOC\t8-15\t1\n"
			"GPU3\tSOC\tSOC\tNV4\t X \tSOC\tSOC\t8-15\t1\n"
			"NIC0\tPHB\tPHB\tSOC\tSOC\t X \tPIX\n"
			"NIC1\tPHB\tPHB\tSOC\tSOC\tPIX\t X \n", &err), 0,
	       "pairs: reads (%s)", err.text);
	is_str(gpu_list(&t, 'i'), "0,0,1,1", "pairs: two islands");
	/* Every GPU ties between the NICs; each takes the less loaded one. */
	is_str(gpu_list(&t, 'c'), "0,1,0,1", "pairs: ties spread over the NICs");
	is_str(nic_list(&t, 's'), ",", "pairs: NIC names unknown without a legend");
	is_str(nic_list(&t, 'r'), "-1,-1", "pairs: two GPUs per NIC: no rails");
	topo_nodetype_clear(&t);

}

static void
test_nvsmi_errors(void)
{
	struct topo_nodetype t;
	pl_err_t err;

	is_int(smi_text(&t, "", &err), -1, "empty: error");
	like(err.text, "no `nvidia-smi topo -m` header", "empty: says what is missing");
	is_int(smi_text(&t, "Legend:\n  X = Self\n", &err), -1, "legend only: error");
	is_int(smi_text(&t, "\tGPU0\tGPU1\tCPU Affinity\n", &err), -1, "header only: error");
	like(err.text, "no row for column GPU0", "header only: names the missing row");
	is_int(smi_text(&t, "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X\tNV1\t0-3\n", &err), -1,
	       "truncated paste: error");
	like(err.text, "GPU1", "truncated paste: names GPU1");
	is_int(smi_text(&t, "\tGPU0\tGPU1\tGPU2\nGPU0\t X \tNV1\n", &err), -1, "short row: error");
	like(err.text, "paste:2: row 'GPU0' has 2 cells, expected 3", "short row: file:line and counts");
	is_int(smi_text(&t, "\tGPU0\tGPU1\nGPU0\t X \tNV1\tSYS\tSYS\n", &err), -1,
	       "long row: error");
	like(err.text, "paste:2: row 'GPU0' has 4 cells, expected at most 2", "long row: says so");
	is_int(smi_text(&t, "\tGPU0\tGPU1\nGPU0\t X \tFOO\n", &err), -1, "bad cell: error");
	like(err.text, "unknown cell 'FOO' (accepted: X, NV<n>, PIX", "bad cell: lists accepted");
	{
		static char big[700];

		snprintf(big, sizeof(big), "\tGPU0\tGPU1\nGPU0\t X \tF\x7f%0600d\n", 0);
		is_int(smi_text(&t, big, &err), -1, "a 602-byte cell: error");
		like(err.text, "unknown cell 'F\\x7f000", "its control byte escaped");
		like(err.text, "...(602 bytes)'", "and cut, saying its length");
	}
	is_int(smi_text(&t, "\tGPU0\tGPU1\nGPU0\tNV1\t X \n", &err), -1, "shifted X: error");
	like(err.text, "shifted", "shifted X: hints at shifted cells");
	is_int(smi_text(&t, "\tGPU0\tGPU1\nGPU0\t X \tNV0\n", &err), -1, "NV0: error");
	is_int(smi_text(&t, "\tGPU0\tGPU2\nGPU0\t X \tNV1\n", &err), -1, "GPU2 after GPU0: error");
	like(err.text, "expected GPU1", "GPU gap: says which was expected");
	is_int(smi_text(&t, "\tGPU0\tGPU1\tCPU Affinity\tBogus Column\n", &err), -1,
	       "unknown heading: error");
	like(err.text, "unknown column heading 'Bogus'", "unknown heading: names it");
	is_int(smi_text(&t, "\tGPU0\tGPU0\n", &err), -1, "duplicate column: error");
	is_int(smi_text(&t, "\tGPU0\tGPU1\nGPU0\t X \tNV1\nGPU0\t X \tNV1\n", &err), -1,
	       "duplicate row: error");
	like(err.text, "second row for 'GPU0'", "duplicate row: says so");
}

static void
test_nvsmi_odd(void)
{
	struct topo_nodetype t;
	pl_err_t err;
	size_t len = 0, i, j;
	char *text, *crlf;

	/* Captured on a one-GPU H200 VM: real ESC bytes around the header. */
	is_int(smi_text(&t,
			"\t\033[4mGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\033[0m\n"
			"GPU0\t X \t0-15\t0\t\tN/A\n"
			"\n"
			"Legend:\n"
			"\n"
			"  X    = Self\n"
			"  NV#  = Connection traversing a bonded set of # NVLinks\n", &err), 0,
	       "H200 capture: reads (%s)", err.text);
	is_int(t.ngpus, 1, "H200 capture: one GPU");
	is_str(gpu_list(&t, 'n'), "0", "H200 capture: NUMA 0");
	is_str(gpu_list(&t, 'i'), "-1", "H200 capture: no island");
	topo_nodetype_clear(&t);
	/* A single GPU: its row is just X. */
	is_int(smi_text(&t, "\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-63\t1\n", &err), 0,
	       "one GPU: reads (%s)", err.text);
	is_str(gpu_list(&t, 'n'), "1", "one GPU: NUMA");
	is_str(gpu_list(&t, 'i'), "-1", "one GPU: no island");
	topo_nodetype_clear(&t);
	/* Huge and non-ASCII junk must be refused, not crash. */
	is_int(smi_text(&t, "\tGPU0\tGPU1\nGPU0\t X \tNV99999999999999999999\n", &err), -1,
	       "huge NV count: error");
	is_int(smi_text(&t, "\tGPU0\tGPU1\nGPU0\t X \t\xc3\xa9\xff\n", &err), -1,
	       "non-ASCII cell: error");
	{
		size_t n = 3000 * 5 + 16;
		char *wide = malloc(n);

		if (wide) {
			size_t k = 0;

			k += (size_t)sprintf(wide + k, "GPU0");
			for (i = 0; i < 3000; i++)
				k += (size_t)sprintf(wide + k, " x%zu", i % 10);
			wide[k] = '\0';
			is_int(smi_text(&t, wide, &err), -1, "3000 columns: error");
			like(err.text, "more than 1024 columns", "3000 columns: says so");
			free(wide);
		}
	}

	/* CRLF line ends read the same. */
	text = read_all(data_path("nvidia-smi-topo/hgx-h100_8gpu_nv18.txt"), &len);
	crlf = text ? malloc(len * 2 + 1) : NULL;
	if (ok(crlf != NULL, "CRLF: source read")) {
		for (i = 0, j = 0; i < len; i++) {
			if (text[i] == '\n')
				crlf[j++] = '\r';
			crlf[j++] = text[i];
		}
		crlf[j] = '\0';
		is_int(smi_text(&t, crlf, &err), 0, "CRLF: reads (%s)", err.text);
		is_str(gpu_list(&t, 'n'), "0,0,0,0,1,1,1,1", "CRLF: NUMA");
		topo_nodetype_clear(&t);
	}
	free(crlf);
	free(text);

	memset(&t, 0, sizeof(t));
	pl_err_clear(&err);
	is_int(topo_read_nvsmi(&t, data_path("nvidia-smi-topo/missing.txt"), &err), -1,
	       "missing file: error");
	like(err.text, "missing.txt", "missing file: names it");
}

/* Every prefix of every capture must give 0 or -1, never a crash or leak. */
static void
test_nvsmi_truncations(void)
{
	static const char *const files[] = {
		"dgx1-v100_8gpu_2nic_tabs_hugectr-dlperf.txt",
		"hgx-b300_8gpu_9nic-bond_tabs_sglang-issue.txt",
		"dgx1-v100-32gb_8gpu_1socket_paddle-fleetx.txt",
	};
	size_t f;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char path[256];
		size_t len = 0, cut;
		char *text;
		int bad = 0, good = 0;

		snprintf(path, sizeof(path), "nvidia-smi-topo/%s", files[f]);
		text = read_all(data_path(path), &len);
		if (!ok(text != NULL, "truncations: read %s", files[f]))
			continue;
		for (cut = 0; cut <= len; cut += 7) {
			struct topo_nodetype t;
			pl_err_t err;
			char saved = text[cut];
			int rv;

			text[cut] = '\0';
			rv = smi_text(&t, text, &err);
			text[cut] = saved;
			if (rv == 0)
				good++;
			else if (rv == -1 && err.text[0] && t.ngpus == 0 && !t.gpus)
				bad++;
			topo_nodetype_clear(&t);
		}
		is_int(good + bad, (int)(len / 7 + 1), "truncations of %s: all 0 or a clean -1 (%d ok)",
		       files[f], good);
		free(text);
	}
}

/* ---------------- NCCL topology XML ---------------- */

static int
nccl(struct topo_nodetype *t, const char *file, pl_err_t *err)
{
	char path[256];

	snprintf(path, sizeof(path), "nccl/%s", file);
	memset(t, 0, sizeof(*t));
	pl_err_clear(err);
	return topo_read_nccl_xml(t, data_path(path), err);
}

static int
nccl_text(struct topo_nodetype *t, const char *text, pl_err_t *err)
{
	int rv;

	memset(t, 0, sizeof(*t));
	pl_err_clear(err);
	if (write_temp(text, strlen(text)) < 0)
		return -2;
	rv = topo_read_nccl_xml(t, tmp_path, err);
	unlink(tmp_path);
	return rv;
}

static void
test_nccl_azure(void)
{
	struct topo_nodetype t;
	pl_err_t err;

	is_int(nccl(&t, "azure-ndv4-topo.xml", &err), 0, "NDv4: reads (%s)", err.text);
	is_int(t.ngpus, 8, "NDv4: 8 GPUs from class 0x030200 pci entries");
	/* No dev attributes: GPU numbers follow bus ids. */
	is_str(gpu_pcis(&t),
	       "0001:00:00.0,0002:00:00.0,0003:00:00.0,0004:00:00.0,000b:00:00.0,000c:00:00.0,000d:00:00.0,000e:00:00.0",
	       "NDv4: GPUs in bus order");
	is_str(gpu_list(&t, 'n'), "1,1,0,0,3,3,2,2", "NDv4: NUMA from the enclosing cpu");
	is_int(t.nnics, 8, "NDv4: 8 NICs from class 0x020700 pci entries");
	is_str(nic_list(&t, 'p'),
	       "0101:00:00.0,0102:00:00.0,0103:00:00.0,0104:00:00.0,0105:00:00.0,0106:00:00.0,0107:00:00.0,0108:00:00.0",
	       "NDv4: NICs in bus order");
	is_str(nic_list(&t, 'n'), "1,1,0,0,3,3,2,2", "NDv4: NIC NUMA");
	/* Switch 01 (numa 0) holds GPUs 0003/0004 and NICs 0103/0104, and so on. */
	is_str(gpu_list(&t, 'c'), "0,1,2,3,4,5,6,7", "NDv4: two GPUs and two NICs per switch, paired");
	is_str(nic_list(&t, 'r'), "0,1,2,3,4,5,6,7", "NDv4: rails");
	is_str(gpu_list(&t, 'i'), "-1,-1,-1,-1,-1,-1,-1,-1", "NDv4: no nvlink elements");
	is_str(nic_list(&t, 's'), ",,,,,,,", "NDv4: NIC names not given");
	topo_nodetype_clear(&t);

	is_int(nccl(&t, "azure-ndv5-topo.xml", &err), 0, "NDv5: reads (%s)", err.text);
	is_str(gpu_pcis(&t),
	       "0001:00:00.0,0002:00:00.0,0003:00:00.0,0008:00:00.0,0009:00:00.0,000a:00:00.0,000b:00:00.0,000c:00:00.0",
	       "NDv5: GPUs in bus order");
	is_str(gpu_list(&t, 'n'), "0,0,0,0,1,1,1,1", "NDv5: NUMA");
	/* One GPU and one NIC per switch: 0008 sits with 0104. */
	is_str(gpu_list(&t, 'c'), "0,1,2,3,4,5,6,7", "NDv5: GPU k with NIC k");
	is_str(t.nnics > 3 ? t.nics[3].pci : "", "0104:00:00.0", "NDv5: NIC 3 is 0104");
	is_str(nic_list(&t, 'r'), "0,1,2,3,4,5,6,7", "NDv5: rails");
	topo_nodetype_clear(&t);

	is_int(nccl(&t, "azure-ndv2-topo.xml", &err), 0, "NDv2: reads (%s)", err.text);
	is_int(t.ngpus, 8, "NDv2: 8 GPUs");
	is_str(gpu_list(&t, 'n'), "0,0,0,0,1,1,1,1", "NDv2: NUMA");
	is_str(nic_list(&t, 'p'), "0101:00:00.0", "NDv2: one IB NIC");
	is_str(nic_list(&t, 'n'), "0", "NDv2: NIC on NUMA 0");
	is_str(gpu_list(&t, 'c'), "0,0,0,0,0,0,0,0", "NDv2: all GPUs use it");
	topo_nodetype_clear(&t);

	is_int(nccl(&t, "azure-ncv4-topo.xml", &err), 0, "NCv4: reads (%s)", err.text);
	is_int(t.ngpus, 4, "NCv4: 4 GPUs");
	is_str(gpu_list(&t, 'x'), "0,1,2,3", "NCv4: dev numbers");
	is_str(gpu_list(&t, 'n'), "0,1,2,3", "NCv4: one GPU per NUMA node");
	is_str(gpu_list(&t, 'i'), "-1,-1,-1,-1", "NCv4: nvlinks to the GPU's own bus id ignored");
	is_str(nic_list(&t, 's'), "eth0", "NCv4: eth0");
	is_double(t.nnics ? t.nics[0].gbps : 0, 100, 1e-9, "NCv4: speed 100000 Mbit/s");
	is_str(nic_list(&t, 'n'), "0", "NCv4: nic directly under cpu 0");
	is_str(nic_list(&t, 'p'), "", "NCv4: NIC bus id unknown");
	is_str(gpu_list(&t, 'c'), "0,0,0,0", "NCv4: every GPU falls back to eth0");
	topo_nodetype_clear(&t);

	is_int(nccl(&t, "azure-ncv4-graph.xml", &err), -1, "NCv4 graph: refused");
	like(err.text,
	     "azure-ncv4-graph.xml: this is an NCCL graph file (<graphs>), not a topology file (<system>)",
	     "NCv4 graph: says what it is");
	is_int(t.ngpus + t.nnics, 0, "NCv4 graph: nothing filled");
}

static void
test_nccl_aws_ibm(void)
{
	struct topo_nodetype t;
	pl_err_t err;

	is_int(nccl(&t, "aws-p4d-24xl-topo.xml", &err), 0, "p4d: reads (%s)", err.text);
	is_int(t.ngpus, 8, "p4d: 8 GPUs");
	is_str(gpu_pcis(&t),
	       "0000:10:1c.0,0000:10:1d.0,0000:20:1c.0,0000:20:1d.0,0000:90:1c.0,0000:90:1d.0,0000:a0:1c.0,0000:a0:1d.0",
	       "p4d: GPU 0-7 as the comments number them");
	is_str(gpu_list(&t, 'n'), "0,0,0,0,1,1,1,1", "p4d: NUMA");
	is_str(nic_list(&t, 'p'), "0000:10:1b.0,0000:20:1b.0,0000:90:1b.0,0000:a0:1b.0",
	       "p4d: 4 EFA");
	is_str(gpu_list(&t, 'c'), "0,0,1,1,2,2,3,3", "p4d: each switch's 2 GPUs share its EFA");
	is_str(nic_list(&t, 'r'), "-1,-1,-1,-1", "p4d: no one-to-one rails");
	topo_nodetype_clear(&t);

	/* Leaf <pci> entries without a class could be GPUs or NICs: not counted. */
	is_int(nccl(&t, "aws-p5.48xl-topo.xml", &err), 0, "p5: valid (%s)", err.text);
	is_int(t.ngpus, 0, "p5: GPUs not listed");
	is_int(t.nnics, 0, "p5: class-less entries not guessed");
	topo_nodetype_clear(&t);
	is_int(nccl(&t, "aws-g5.48xl-topo.xml", &err), 0, "g5: valid (%s)", err.text);
	is_int(t.ngpus + t.nnics, 0, "g5: bare bus ids say nothing");
	topo_nodetype_clear(&t);

	is_int(nccl(&t, "ibm-vpc-gx3d-160x1792x8h100_nccl-topo-dump.xml", &err), 0,
	       "IBM H100: reads (%s)", err.text);
	is_int(t.ngpus, 8, "IBM H100: 8 GPUs");
	is_str(gpu_list(&t, 'x'), "0,1,2,3,4,5,6,7", "IBM H100: dev numbers");
	is_str(gpu_pcis(&t),
	       "0000:a4:00.0,0000:ae:00.0,0000:b8:00.0,0000:c2:00.0,0000:cc:00.0,0000:d6:00.0,0000:e0:00.0,0000:ea:00.0",
	       "IBM H100: GPU bus ids");
	is_str(gpu_list(&t, 'n'), "0,0,0,0,1,1,1,1", "IBM H100: NUMA");
	is_str(gpu_list(&t, 'i'), "0,0,0,0,0,0,0,0", "IBM H100: one NVSwitch island");
	is_str(nic_list(&t, 's'), "mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7",
	       "IBM H100: NICs by net dev");
	is_str(nic_list(&t, 'p'),
	       "0000:e9:00.0,0000:df:00.0,0000:d5:00.0,0000:cb:00.0,0000:c1:00.0,0000:b7:00.0,0000:ad:00.0,0000:a3:00.0",
	       "IBM H100: NIC bus ids");
	is_str(nic_list(&t, 'n'), "1,1,1,1,0,0,0,0", "IBM H100: NIC NUMA");
	is_str(nic_list(&t, 'o'), "1,1,1,1,1,1,1,1", "IBM H100: port 1");
	is_double(t.nnics ? t.nics[0].gbps : 0, 200, 1e-9, "IBM H100: 200000 Mbit/s");
	/* GPU a4 shares bridge a1 with mlx5_7 (a3), ..., GPU ea shares e7 with mlx5_0. */
	is_str(gpu_list(&t, 'c'), "7,6,5,4,3,2,1,0", "IBM H100: GPU k with mlx5_(7-k)");
	is_str(nic_list(&t, 'r'), "0,1,2,3,4,5,6,7", "IBM H100: rails follow NIC names");
	topo_nodetype_clear(&t);
}

static void
test_nccl_synthetic(void)
{
	struct topo_nodetype t;
	pl_err_t err;

	is_int(nccl_text(&t,
			 "<?xml version='1.0'?>\n"
			 "<!-- a comment with <pci> inside -->\n"
			 "<system version='1'>\n"
			 " <cpu numaid='0'>\n"
			 "  <pci busid='0000:01:00.0' class='0x060400'>\n"
			 "   <pci busid='0000:02:00.0' class='0x030200'><gpu dev='1'>\n"
			 "     <nvlink target='0000:03:00.0' count='2' tclass='0x030200'/>\n"
			 "     <nvlink target='0000:00:00.0' count='1' tclass='0x068001'/>\n"
			 "   </gpu></pci>\n"
			 "   <pci busid='0000:03:00.0' class='0x030200'><gpu dev='0'/></pci>\n"
			 "   <pci busid='0000:04:00.0' class='0x020000'><nic>\n"
			 "     <net name=\"ib&amp;0\" dev=\"1\" speed=\"400000\" port=\"2\"/>\n"
			 "   </nic></pci>\n"
			 "  </pci>\n"
			 "  <nic><net name='eth0' dev='0' speed='25000'/></nic>\n"
			 " </cpu>\n"
			 " <cpu numaid='1'>\n"
			 "  <pci busid='0000:81:00.0' class='0x030200'><gpu dev='2'>\n"
			 "   <nvlink target='0000:82:00.0' count='1' tclass='0x030200'/>\n"
			 "  </gpu></pci>\n"
			 "  <pci busid='0000:82:00.0' class='0x030200'><gpu dev='3'/></pci>\n"
			 "  <pci busid='0000:83:00.0' class='0x030200'><gpu dev='4'>\n"
			 "   <nvlink target='0000:84:00.0' count='0' tclass='0x030200'/>\n"
			 "  </gpu></pci>\n"
			 " </cpu>\n"
			 "</system>\n", &err), 0, "synthetic: reads (%s)", err.text);
	is_str(gpu_list(&t, 'x'), "0,1,2,3,4", "synthetic: sorted by dev");
	is_str(gpu_pcis(&t), "0000:03:00.0,0000:02:00.0,0000:81:00.0,0000:82:00.0,0000:83:00.0",
	       "synthetic: bus ids follow the dev order");
	/* GPU-GPU links join (either direction); CPU links and count 0 do not. */
	is_str(gpu_list(&t, 'i'), "0,0,1,1,-1", "synthetic: islands");
	is_str(nic_list(&t, 's'), "eth0,ib&0", "synthetic: NICs by dev, entity decoded");
	is_str(nic_list(&t, 'o'), "0,2", "synthetic: ports");
	/* GPUs under switch 01 take ib&0 (same switch) over eth0 (same cpu). */
	is_str(gpu_list(&t, 'c'), "1,1,0,0,0", "synthetic: switch beats cpu; cpu 1 GPUs fall back");
	topo_nodetype_clear(&t);

	/* An NVSwitch target that is no GPU joins all its GPUs into one island. */
	is_int(nccl_text(&t,
			 "<system version=\"1\"><cpu numaid=\"0\">"
			 "<pci busid=\"0000:0A:00.0\" class=\"0x030200\"><gpu dev=\"0\">"
			 "<nvlink target=\"fffffff:ff:ff.0\" count=\"18\" tclass=\"0x068000\"/></gpu></pci>"
			 "<pci busid=\"0000:0B:00.0\" class=\"0x030200\"><gpu dev=\"1\">"
			 "<nvlink target=\"fffffff:ff:fe.0\" count=\"18\"/></gpu></pci>"
			 "<pci busid=\"0000:0c:00.0\" class=\"0x030200\"/>"
			 "</cpu></system>", &err), 0, "NVSwitch: reads (%s)", err.text);
	is_str(gpu_list(&t, 'i'), "0,0,-1", "NVSwitch: linked GPUs one island, bare GPU none");
	is_str(gpu_pcis(&t), "0000:0a:00.0,0000:0b:00.0,0000:0c:00.0", "NVSwitch: bus ids lower case");
	is_str(gpu_list(&t, 'x'), "0,1,2", "NVSwitch: class-only GPU numbered after dev ones");
	topo_nodetype_clear(&t);

}

static void
test_nccl_errors(void)
{
	struct topo_nodetype t;
	pl_err_t err;

	is_int(nccl_text(&t, "", &err), -1, "empty: error");
	like(err.text, "no elements", "empty: says so");
	is_int(nccl_text(&t, "<system><cpu numaid='0'>", &err), -1, "unclosed: error");
	like(err.text, "<cpu> opened at line 1 is never closed", "unclosed: names element and line");
	is_int(nccl_text(&t, "<system>\n<cpu></pci></system>", &err), -1, "mismatched: error");
	like(err.text, ":2: </pci> closes <cpu>", "mismatched: file:line");
	is_int(nccl_text(&t, "<system><cpu numaid='zero'/></system>", &err), -1, "bad numaid: error");
	like(err.text, "numaid=\"zero\">: expected a number", "bad numaid: names the value");
	is_int(nccl_text(&t, "<system><cpu numaid=0/></system>", &err), -1, "unquoted: error");
	like(err.text, "not quoted", "unquoted: says so");
	is_int(nccl_text(&t, "<system><!-- open", &err), -1, "open comment: error");
	like(err.text, "comment is never closed", "open comment: says so");
	is_int(nccl_text(&t, "<topology/>", &err), -1, "wrong root: error");
	like(err.text, "root element is <topology>; expected <system>", "wrong root: says so");
	is_int(nccl_text(&t, "<system/><system/>", &err), -1, "two roots: error");
	is_int(nccl_text(&t,
			 "<system><cpu><pci busid='0000:01:00.0'><gpu dev='0'/></pci>"
			 "<pci busid='0000:02:00.0'><gpu dev='0'/></pci></cpu></system>", &err), -1,
	       "duplicate dev: error");
	like(err.text, "<gpu dev=\"0\"> appears twice", "duplicate dev: says so");
	is_int(nccl_text(&t, "<system><cpu><pci><gpu dev='99999999999999999999'/></pci></cpu></system>",
			 &err), -1, "huge dev: error");
	is_int(nccl_text(&t, "<system><cpu><pci class='0xZZ'/></cpu></system>", &err), -1,
	       "bad class: error");
	is_int(nccl_text(&t, "<system><cpu><pci><nic><net name='x' speed='fast'/></nic></pci></cpu></system>",
			 &err), -1, "bad speed: error");
	like(err.text, "expected a speed in Mbit/s", "bad speed: says what is wanted");
}

static void
test_nccl_odd(void)
{
	struct topo_nodetype t;
	pl_err_t err;

	is_int(nccl_text(&t, "<system>\xc3\xa9\xff<cpu numaid='0'>\x01</cpu></system>", &err), 0,
	       "non-ASCII text between tags: ignored (%s)", err.text);
	topo_nodetype_clear(&t);
	is_int(nccl_text(&t, "<system><cpu numaid='0' numaid", &err), -1, "cut in a tag: error");
	is_int(nccl_text(&t, "<system><cpu a='1' b='2' c='3' d='4' e='5' f='6' g='7' h='8' i='9' "
			 "j='1' k='1' l='1' m='1' n='1' o='1' p='1' q='1' r='1' s='1' t='1' u='1' "
			 "v='1' w='1' x='1' y='1' z='1' aa='1' ab='1' ac='1' ad='1' ae='1' af='1' "
			 "ag='1'/></system>", &err), -1, "33 attributes: error");
	{
		char deep[2048];
		size_t k = 0;
		int d;

		k += (size_t)sprintf(deep + k, "<system>");
		for (d = 0; d < 40; d++)
			k += (size_t)sprintf(deep + k, "<pci>");
		deep[k] = '\0';
		is_int(nccl_text(&t, deep, &err), -1, "40 levels: error");
		like(err.text, "nest deeper than", "40 levels: says so");
	}
	memset(&t, 0, sizeof(t));
	pl_err_clear(&err);
	is_int(topo_read_nccl_xml(&t, data_path("nccl/missing-topo.xml"), &err), -1,
	       "missing file: error");
	like(err.text, "missing-topo.xml", "missing file: names it");
}

/* Every prefix of the richest files must give 0 or a clean -1. */
static void
test_nccl_truncations(void)
{
	static const char *const files[] = {
		"ibm-vpc-gx3d-160x1792x8h100_nccl-topo-dump.xml",
		"aws-p4d-24xl-topo.xml",
	};
	size_t f;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char path[256];
		size_t len = 0, cut;
		char *text;
		int bad = 0, good = 0, n = 0;

		snprintf(path, sizeof(path), "nccl/%s", files[f]);
		text = read_all(data_path(path), &len);
		if (!ok(text != NULL, "truncations: read %s", files[f]))
			continue;
		for (cut = 0; cut < len; cut += 61) {
			struct topo_nodetype t;
			pl_err_t err;
			char saved = text[cut];
			int rv;

			text[cut] = '\0';
			rv = nccl_text(&t, text, &err);
			text[cut] = saved;
			n++;
			if (rv == 0)
				good++;
			else if (rv == -1 && err.text[0] && t.ngpus == 0 && !t.gpus)
				bad++;
			topo_nodetype_clear(&t);
		}
		is_int(good + bad, n, "truncations of %s: all 0 or a clean -1", files[f]);
		is_int(good, 0, "truncations of %s: a cut file never passes as whole", files[f]);
		free(text);
	}
}

int
main(void)
{
	plan(339);
	data = getenv("PL_TEST_DATA");
	if (!data)
		data = "../tests/data";
	test_hwloc_g4dn();
	test_hwloc_dgx2();
	test_hwloc_power8();
	test_hwloc_lassen();
	test_hwloc_amd();
	test_hwloc_misc();
	test_hwloc_edits();
	test_hwloc_bad_files();
	test_hwloc_live();
	test_nvsmi_files();
	test_nvsmi_files_nvswitch();
	test_nvsmi_text();
	test_nvsmi_errors();
	test_nvsmi_odd();
	test_nvsmi_truncations();
	test_nccl_azure();
	test_nccl_aws_ibm();
	test_nccl_synthetic();
	test_nccl_errors();
	test_nccl_odd();
	test_nccl_truncations();
	return done_testing();
}
