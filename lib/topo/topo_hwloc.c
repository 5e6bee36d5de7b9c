/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reader for hwloc topologies: an XML export (hwloc 2 reads both the v1 and
 * the v2 format) or live discovery of this node.  GPUs are the CUDA, NVML and
 * RSMI OS devices, one per PCI device; files written by hwloc 1 name NVIDIA
 * GPUs only as DRM cards, so when no such OS device exists the NVIDIA
 * display/3D PCI devices stand in.  NICs are the OpenFabrics OS devices (and
 * Slingshot network devices, which hwloc does not class as OpenFabrics).
 * NVLink and xGMI islands come from the "NVLinkBandwidth" and
 * "XGMIBandwidth" distance matrices.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <hwloc.h>

#include "hosts.h"
#include "topo.h"
#include "topo_util.h"

/* PCI vendor of HPE/Cray, whose Slingshot NICs appear as network devices. */
#define PCI_VENDOR_CRAY 0x17db
#define PCI_VENDOR_NVIDIA 0x10de
#define PCI_CLASS_VGA 0x0300
#define PCI_CLASS_3D 0x0302
#define PCI_CLASS_BRIDGE_OTHER 0x0680
#define HW_MAX_ANCESTORS 256
#define HW_MAX_PORTS 16
#define HW_MAX_MATRICES 8
/* Exports of the largest machines are a few MB. */
#define HW_MAX_XML_BYTES (256L << 20)

struct hgpu {
	hwloc_obj_t pci;	/* the PCI device; NULL for a GPU without one */
	hwloc_obj_t os;		/* the first GPU OS device seen */
	int nvml, cuda, rsmi;	/* OS device numbers; -1 unknown */
	int index;
	const char *model;
	double mem_gb;		/* 0 unknown */
};

struct hnic {
	hwloc_obj_t os;
	hwloc_obj_t pci;
};

static hwloc_obj_t
pci_of(hwloc_obj_t o)
{
	for (; o; o = o->parent)
		if (o->type == HWLOC_OBJ_PCI_DEVICE)
			return o;
	return NULL;
}

static void
pci_string(char *dst, hwloc_obj_t pci)
{
	dst[0] = '\0';
	if (pci)
		snprintf(dst, TOPO_PCI, "%04x:%02x:%02x.%x", (unsigned)pci->attr->pcidev.domain,
			 (unsigned)pci->attr->pcidev.bus, (unsigned)pci->attr->pcidev.dev,
			 (unsigned)pci->attr->pcidev.func);
}

static int
cmp_pci(hwloc_obj_t a, hwloc_obj_t b)
{
	const struct hwloc_pcidev_attr_s *x, *y;

	if (!a || !b)
		return (a == NULL) - (b == NULL);
	x = &a->attr->pcidev;
	y = &b->attr->pcidev;
	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	if (x->bus != y->bus)
		return x->bus < y->bus ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return 0;
}

/*
 * The NUMA node next to an object: the one CPU-bearing NUMA node of its
 * first non-I/O ancestor.  Memory-only nodes (GPU memory on POWER9, HBM)
 * are skipped; an ancestor spanning several nodes gives -1.
 */
static int
numa_of(hwloc_topology_t topo, hwloc_obj_t obj)
{
	hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, obj);
	hwloc_obj_t numa = NULL;
	int found = -1, n = 0;

	if (!anc || !anc->nodeset)
		return -1;
	while ((numa = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, numa))) {
		if (!hwloc_bitmap_isset(anc->nodeset, numa->os_index))
			continue;
		if (numa->cpuset && hwloc_bitmap_iszero(numa->cpuset))
			continue;
		found = (int)numa->os_index;
		n++;
	}
	if (n == 1)
		return found;
	if (n == 0 && hwloc_bitmap_weight(anc->nodeset) == 1)
		return hwloc_bitmap_first(anc->nodeset);
	return -1;
}

/*
 * How deep the lowest common ancestor of a and b sits: same PCI switch is
 * deeper than same host bridge, which is deeper than the same package or
 * NUMA group, which is deeper than the machine.  hwloc's own helper does not
 * accept I/O objects, hence the walk.
 */
static int
closeness(hwloc_obj_t a, hwloc_obj_t b)
{
	hwloc_obj_t up[HW_MAX_ANCESTORS];
	int n = 0, i, depth;

	for (; a && n < HW_MAX_ANCESTORS; a = a->parent)
		up[n++] = a;
	for (; b; b = b->parent)
		for (i = 0; i < n; i++)
			if (up[i] == b) {
				depth = 0;
				for (; b->parent; b = b->parent)
					depth++;
				return depth;
			}
	return 0;
}

/* Which GPU OS device this is, and its number; false for anything else. */
static bool
gpu_osdev(hwloc_obj_t o, int **slot, struct hgpu *g)
{
	int k;

	if ((k = topo_util_numbered(o->name, "nvml")) >= 0)
		*slot = &g->nvml;
	else if ((k = topo_util_numbered(o->name, "cuda")) >= 0)
		*slot = &g->cuda;
	else if ((k = topo_util_numbered(o->name, "rsmi")) >= 0)
		*slot = &g->rsmi;
	else
		return false;
	**slot = k;
	return true;
}

/* hwloc gives memory sizes in kB of 1024 bytes; 0 for junk. */
static double
kib_to_gb(const char *v)
{
	char *end;
	double kb;

	kb = strtod(v, &end);
	if (end == v || *end || !(kb > 0 && kb < 1e15))
		return 0;
	return kb * 1024.0 / 1e9;
}

/* GPU memory from a CUDA or RSMI OS device, in GB; 0 unknown. */
static double
osdev_mem_gb(hwloc_obj_t o)
{
	const char *v = hwloc_obj_get_info_by_name(o, "CUDAGlobalMemorySize");

	if (!v)
		v = hwloc_obj_get_info_by_name(o, "RSMIVRAMSize");
	return v ? kib_to_gb(v) : 0;
}

static int
push_gpu(struct hgpu **arr, int *n, hwloc_obj_t pci, hwloc_obj_t os)
{
	struct hgpu *p = realloc(*arr, (size_t)(*n + 1) * sizeof(**arr));

	if (!p)
		return -1;
	*arr = p;
	memset(&p[*n], 0, sizeof(p[*n]));
	p[*n].pci = pci;
	p[*n].os = os;
	p[*n].nvml = p[*n].cuda = p[*n].rsmi = -1;
	p[*n].index = -1;
	(*n)++;
	return 0;
}

/* One GPU per PCI device, from whichever of its CUDA/NVML/RSMI OS devices. */
static int
collect_gpus(hwloc_topology_t topo, struct hgpu **gpus, int *ngpus)
{
	hwloc_obj_t o = NULL;
	int i;

	while ((o = hwloc_get_next_osdev(topo, o))) {
		struct hgpu probe, *g = NULL;
		hwloc_obj_t pci = pci_of(o);
		const char *model;
		int *slot;
		double mem;

		if (!gpu_osdev(o, &slot, &probe))
			continue;
		for (i = 0; i < *ngpus && pci; i++)
			if ((*gpus)[i].pci == pci)
				g = &(*gpus)[i];
		if (!g) {
			if (push_gpu(gpus, ngpus, pci, o) < 0)
				return -1;
			g = &(*gpus)[*ngpus - 1];
		}
		gpu_osdev(o, &slot, g);
		model = hwloc_obj_get_info_by_name(o, "GPUModel");
		if (model && *model && !g->model)
			g->model = model;
		mem = osdev_mem_gb(o);
		if (mem > 0)
			g->mem_gb = mem;
	}
	/* Some RSMI exports lack the VRAM size that the OpenCL device gives. */
	o = NULL;
	while ((o = hwloc_get_next_osdev(topo, o))) {
		hwloc_obj_t pci = pci_of(o);
		const char *v = hwloc_obj_get_info_by_name(o, "OpenCLGlobalMemorySize");

		for (i = 0; i < *ngpus && pci && v; i++)
			if ((*gpus)[i].pci == pci && (*gpus)[i].mem_gb == 0)
				(*gpus)[i].mem_gb = kib_to_gb(v);
	}
	if (*ngpus > 0)
		return 0;
	/* hwloc 1 files: NVIDIA GPUs show only as PCI devices with DRM cards. */
	o = NULL;
	while ((o = hwloc_get_next_pcidev(topo, o))) {
		unsigned cls = o->attr->pcidev.class_id;

		if (o->attr->pcidev.vendor_id == PCI_VENDOR_NVIDIA &&
		    (cls == PCI_CLASS_3D || cls == PCI_CLASS_VGA))
			if (push_gpu(gpus, ngpus, o, NULL) < 0)
				return -1;
	}
	return 0;
}

static int
cmp_hgpu_bus(const void *pa, const void *pb)
{
	const struct hgpu *a = pa, *b = pb;

	return cmp_pci(a->pci, b->pci);
}

static int
cmp_hgpu_index(const void *pa, const void *pb)
{
	const struct hgpu *a = pa, *b = pb;

	return (a->index > b->index) - (a->index < b->index);
}

enum numbering { BY_NVML, BY_CUDA, BY_RSMI, BY_BUS };

static int
gpu_number(const struct hgpu *g, enum numbering by)
{
	return by == BY_NVML ? g->nvml : by == BY_CUDA ? g->cuda : g->rsmi;
}

/* true when every GPU has a number of this kind and no two share one */
static bool
usable_numbers(const struct hgpu *g, int n, enum numbering by)
{
	int i, j;

	for (i = 0; i < n; i++) {
		if (gpu_number(&g[i], by) < 0)
			return false;
		for (j = 0; j < i; j++)
			if (gpu_number(&g[i], by) == gpu_number(&g[j], by))
				return false;
	}
	return true;
}

/*
 * GPU indexes: NVML numbers (the nvidia-smi order) when every GPU has one,
 * else CUDA, else RSMI, else the order of PCI bus ids.
 */
static void
number_gpus(struct hgpu *g, int n)
{
	enum numbering by = BY_NVML;
	int i;

	if (n == 0)
		return;
	while (by < BY_BUS && !usable_numbers(g, n, by))
		by++;
	if (by == BY_BUS)
		qsort(g, (size_t)n, sizeof(*g), cmp_hgpu_bus);
	for (i = 0; i < n; i++)
		g[i].index = by == BY_BUS ? i : gpu_number(&g[i], by);
	qsort(g, (size_t)n, sizeof(*g), cmp_hgpu_index);
}

static bool
is_nic_osdev(hwloc_obj_t o)
{
	hwloc_obj_t pci;

	if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS)
		return true;
	pci = pci_of(o);
	return o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && pci &&
	       pci->attr->pcidev.vendor_id == PCI_VENDOR_CRAY;
}

static int
cmp_hnic(const void *pa, const void *pb)
{
	const struct hnic *a = pa, *b = pb;

	/* Natural order, so mlx5_2 comes before mlx5_10. */
	return hosts_natural_cmp(a->os->name ? a->os->name : "", b->os->name ? b->os->name : "");
}

static int
collect_nics(hwloc_topology_t topo, struct hnic **nics, int *nnics)
{
	hwloc_obj_t o = NULL;

	while ((o = hwloc_get_next_osdev(topo, o))) {
		struct hnic *p;

		if (!is_nic_osdev(o) || !o->name)
			continue;
		p = realloc(*nics, (size_t)(*nnics + 1) * sizeof(**nics));
		if (!p)
			return -1;
		*nics = p;
		p[*nnics].os = o;
		p[*nnics].pci = pci_of(o);
		(*nnics)++;
	}
	if (*nnics > 0)
		qsort(*nics, (size_t)*nnics, sizeof(**nics), cmp_hnic);
	return 0;
}

/* The first active port (state 4), else the first port listed, else 1. */
static int
nic_port(hwloc_obj_t o)
{
	char key[32];
	int p, first = 0;

	for (p = 1; p <= HW_MAX_PORTS; p++) {
		const char *state;

		snprintf(key, sizeof(key), "Port%dState", p);
		state = hwloc_obj_get_info_by_name(o, key);
		if (!state)
			continue;
		if (strcmp(state, "4") == 0)
			return p;
		if (!first)
			first = p;
	}
	return first ? first : 1;
}

/* The GPU an object of a distance matrix stands for, or -1. */
static int
gpu_of_obj(const struct hgpu *g, int n, hwloc_obj_t o)
{
	hwloc_obj_t pci = pci_of(o);
	int i;

	for (i = 0; i < n; i++)
		if ((pci && g[i].pci == pci) || g[i].os == o)
			return i;
	return -1;
}

static bool
is_nvswitch(hwloc_obj_t o)
{
	return o->type == HWLOC_OBJ_PCI_DEVICE &&
	       ((o->subtype && strcasecmp(o->subtype, "NVSwitch") == 0) ||
		(o->attr->pcidev.vendor_id == PCI_VENDOR_NVIDIA &&
		 o->attr->pcidev.class_id == PCI_CLASS_BRIDGE_OTHER));
}

/*
 * Join GPUs that a bandwidth matrix links, directly or through a non-GPU I/O
 * device (node hub + j for the matrix's object j).  All NVSwitches count as
 * one node, since a node's switches are wired to each other even where the
 * matrix only lists GPU-switch links (DGX-2: two boards, one domain).  Links
 * to CPUs (POWER NVLink) do not join.
 */
static void
join_matrix(const struct hwloc_distances_s *d, const struct hgpu *g, int ngpus, int hub,
	    int nvswitch, int *up, bool *linked)
{
	unsigned i, j, nb = d->nbobjs;

	for (i = 0; i < nb; i++) {
		int a = gpu_of_obj(g, ngpus, d->objs[i]);

		if (a < 0)
			continue;
		for (j = 0; j < nb; j++) {
			hwloc_obj_t o = d->objs[j];
			int b;

			if (i == j || d->values[i * nb + j] == 0)
				continue;
			b = gpu_of_obj(g, ngpus, o);
			if (b == a)
				continue;
			if (b >= 0) {
				topo_util_join(up, a, b);
				linked[a] = linked[b] = true;
			} else if (is_nvswitch(o)) {
				topo_util_join(up, a, nvswitch);
				linked[a] = true;
			} else if (hwloc_obj_type_is_io(o->type)) {
				topo_util_join(up, a, hub + (int)j);
				linked[a] = true;
			}
		}
	}
}

/* NVLink (NVIDIA) and xGMI (AMD) islands from hwloc's bandwidth matrices. */
static int
islands(hwloc_topology_t topo, struct topo_nodetype *t, const struct hgpu *g)
{
	static const char *const names[] = { "NVLinkBandwidth", "XGMIBandwidth" };
	struct hwloc_distances_s *d[HW_MAX_MATRICES];
	unsigned nd = 0, k, nr;
	int *up = NULL, *id = NULL, nodes = t->ngpus + 1, hub, i, rv = -1;
	bool *linked = NULL;

	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		nr = HW_MAX_MATRICES - nd;
		if (hwloc_distances_get_by_name(topo, names[k], &nr, d + nd, 0) < 0)
			continue;
		nd += nr < HW_MAX_MATRICES - nd ? nr : HW_MAX_MATRICES - nd;
	}
	for (k = 0; k < nd; k++)
		nodes += (int)d[k]->nbobjs;
	up = calloc((size_t)nodes + 1, sizeof(*up));
	id = calloc((size_t)nodes + 1, sizeof(*id));
	linked = calloc((size_t)nodes + 1, sizeof(*linked));
	if (!up || !id || !linked)
		goto out;
	for (i = 0; i < nodes; i++)
		up[i] = i;
	hub = t->ngpus + 1;
	for (k = 0; k < nd; k++) {
		join_matrix(d[k], g, t->ngpus, hub, t->ngpus, up, linked);
		hub += (int)d[k]->nbobjs;
	}
	topo_util_number_islands(t, up, linked, id, nodes);
	rv = 0;
out:
	for (k = 0; k < nd; k++)
		hwloc_distances_release(topo, d[k]);
	free(up);
	free(id);
	free(linked);
	return rv;
}

/* Board names that vendors leave as placeholders. */
static bool
placeholder(const char *s)
{
	static const char *const junk[] = {
		"To be filled", "Not Specified", "Default string", "System Product Name",
		"0123456789", "None", "Unknown",
	};
	size_t i;

	if (!s || !*s)
		return true;
	for (i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		if (strncasecmp(s, junk[i], strlen(junk[i])) == 0)
			return true;
	return false;
}

static void
copy_name(char *dst, const char *src)
{
	snprintf(dst, TOPO_NAME, "%s", src ? src : "");
}

static int
fill(hwloc_topology_t topo, struct topo_nodetype *t, struct hgpu *g, int ngpus,
     struct hnic *nics, int nnics, const char *label, pl_err_t *err)
{
	const char *product = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo),
							 "DMIProductName");
	int *score = NULL, *load = NULL, i, k, rv = -1;

	t->gpus = ngpus ? calloc((size_t)ngpus, sizeof(*t->gpus)) : NULL;
	t->nics = nnics ? calloc((size_t)nnics, sizeof(*t->nics)) : NULL;
	score = calloc((size_t)ngpus * (size_t)nnics + 1, sizeof(*score));
	load = calloc((size_t)nnics + 1, sizeof(*load));
	if ((ngpus && !t->gpus) || (nnics && !t->nics) || !score || !load) {
		pl_err_set(err, "%s: out of memory", label);
		goto out;
	}
	t->ngpus = ngpus;
	t->nnics = nnics;
	for (k = 0; k < nnics; k++) {
		struct topo_nic *nic = &t->nics[k];

		copy_name(nic->name, nics[k].os->name);
		nic->port = nics[k].os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS ?
			    nic_port(nics[k].os) : 0;
		nic->rail = -1;
		nic->numa = numa_of(topo, nics[k].os);
		pci_string(nic->pci, nics[k].pci);
	}
	for (i = 0; i < ngpus; i++) {
		struct topo_gpu *gpu = &t->gpus[i];
		hwloc_obj_t where = g[i].pci ? g[i].pci : g[i].os;

		gpu->index = g[i].index;
		gpu->numa = numa_of(topo, where);
		pci_string(gpu->pci, g[i].pci);
		gpu->island = -1;
		gpu->nic = -1;
		copy_name(gpu->name, g[i].model);
		/* Plan for the smallest GPU when a node mixes models. */
		if (g[i].mem_gb > 0 && (t->gpu_memory_gb == 0 || g[i].mem_gb < t->gpu_memory_gb))
			t->gpu_memory_gb = g[i].mem_gb;
		for (k = 0; k < nnics; k++)
			score[i * nnics + k] = closeness(where, nics[k].pci ? nics[k].pci : nics[k].os);
	}
	if (islands(topo, t, g) < 0) {
		pl_err_set(err, "%s: out of memory", label);
		goto out;
	}
	topo_util_pick_nics(t, score, load);
	if (!placeholder(product))
		copy_name(t->name, product);
	else if (ngpus > 0 && g[0].model)
		copy_name(t->name, g[0].model);
	rv = 0;
out:
	free(score);
	free(load);
	return rv;
}

/*
 * Read an XML export whole.  A file cut short is refused here, before hwloc
 * sees it: hwloc reports it too, but leaks memory on that path.
 */
static char *
read_xml(const char *path, pl_err_t *err)
{
	static const char close_tag[] = "</topology>";
	char *buf = NULL, *rv = NULL, c[PL_CLIP_BUF];
	size_t len, end;

	pl_clip_path(path, c, sizeof(c));

	buf = topo_util_read_file(path, HW_MAX_XML_BYTES, "an lstopo XML export", &len, err);
	if (!buf)
		goto out;
	if (strlen(buf) != len || !strstr(buf, "<topology")) {
		pl_err_set(err, "%s: no <topology> element; expected an lstopo XML export (hwloc v1 or v2 format)",
			   c);
		goto out;
	}
	end = len;
	while (end > 0 && (buf[end - 1] == ' ' || buf[end - 1] == '\n' ||
			   buf[end - 1] == '\r' || buf[end - 1] == '\t'))
		end--;
	if (end < sizeof(close_tag) - 1 ||
	    strncmp(buf + end - (sizeof(close_tag) - 1), close_tag, sizeof(close_tag) - 1) != 0) {
		pl_err_set(err, "%s: does not end with </topology> (truncated file?)", c);
		goto out;
	}
	rv = buf;
	buf = NULL;
out:
	free(buf);
	return rv;
}

/*
 * Fill *t (zeroed by the caller) from an hwloc XML file, or from this node
 * when path is NULL.  Returns 0 (a node without GPUs is fine), or -1 with err
 * set; *t is left empty on error.
 */
int
topo_read_hwloc(struct topo_nodetype *t, const char *path, pl_err_t *err)
{
	hwloc_topology_t topo = NULL;
	struct hgpu *gpus = NULL;
	struct hnic *nics = NULL;
	char c[PL_CLIP_BUF], *xml = NULL;
	const char *label = path ? pl_clip_path(path, c, sizeof(c)) : "hwloc discovery of this node";
	int ngpus = 0, nnics = 0, rv = -1;

	if (path && !(xml = read_xml(path, err)))
		goto out;
	if (hwloc_topology_init(&topo) < 0) {
		topo = NULL;
		pl_err_set(err, "%s: hwloc_topology_init failed: %s", label, strerror(errno));
		goto out;
	}
	/* I/O objects are filtered out by default: GPUs and NICs would vanish. */
	hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (xml && hwloc_topology_set_xmlbuffer(topo, xml, (int)strlen(xml) + 1) < 0) {
		pl_err_set(err, "%s: hwloc cannot read this XML: %s", label, strerror(errno));
		goto out;
	}
	/* A job's cgroup must not hide the rest of the node's type. */
	if (!path)
		hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
	if (hwloc_topology_load(topo) < 0) {
		pl_err_set(err, "%s: hwloc could not load it (%s); expected an lstopo XML export (hwloc v1 or v2 format)",
			   label, strerror(errno));
		goto out;
	}
	if (collect_gpus(topo, &gpus, &ngpus) < 0 || collect_nics(topo, &nics, &nnics) < 0) {
		pl_err_set(err, "%s: out of memory", label);
		goto out;
	}
	number_gpus(gpus, ngpus);
	if (fill(topo, t, gpus, ngpus, nics, nnics, label, err) < 0) {
		topo_nodetype_clear(t);
		goto out;
	}
	rv = 0;
out:
	free(gpus);
	free(nics);
	free(xml);
	if (topo)
		hwloc_topology_destroy(topo);
	return rv;
}
