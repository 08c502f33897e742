/* report/svg.c — see report/svg.h.
 *
 * The folded lines become one prefix tree: "all", then the state frame,
 * then the call path.  Lines come sorted, so a line shares most of its
 * frames with the one before; those nodes are reused from the previous
 * line's path and only the frames after the shared prefix are looked up in
 * the hash table.  Only frames of at least 0.1% are sorted, laid out and
 * drawn; for those the same call path is looked up in the other two state
 * towers to give the tooltip's sum over all states.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "report/svg.h"

#define WP_SVG_NONE UINT32_MAX

/* Page geometry in pixels.  The character width is that of an 11 px
 * monospace font, used to elide labels without measuring text. */
enum { SVG_W = 1200, SVG_MARGIN = 10, SVG_ROW = 16, SVG_TOP = 80, SVG_BOTTOM = 10 };
static const double svg_char_w = 6.7;

/* The three known states come first so they can index the twin arrays. */
/* The MPI states of format/format.h, then "other" for a root frame that is
 * none of them (a folded file from another tool). */
enum svg_state { ST_OTHER = WP_STATE_COUNT, ST_COUNT };

static const char *svg_state_name(int s)
{
    return s < WP_STATE_COUNT ? wp_state_name(s) : "other";
}

/* The fixed colour of each state frame, also used in the legend. */
static const int svg_state_rgb[ST_COUNT][3] = {{90, 190, 90}, {90, 150, 230}, {230, 80, 70}, {170, 170, 170}};

struct svg_node {
    const char *name; /* points into the caller's folded line, not terminated */
    uint64_t total;
    uint32_t len;
    uint32_t hash; /* of (parent, name): kept so the table can grow without rehashing names */
    uint32_t parent;
    uint32_t depth;
    uint32_t drawn; /* index in the list of drawn frames, or WP_SVG_NONE */
    uint8_t state;
};

/* What is known about a frame that is drawn; the name and parent are
 * copied here so sorting needs nothing else. */
struct svg_drawn {
    const char *name;
    uint32_t len, parent, node;
    uint32_t twin[3]; /* the same call path in each state tower, or WP_SVG_NONE */
    uint64_t x;       /* offset from the left edge, in samples */
};

struct svg_tree {
    struct svg_node *n;
    uint32_t count, cap;
    uint32_t *slot; /* open addressing; WP_SVG_NONE marks a free slot */
    size_t nslots;
    /* The previous line's path: its nodes and where each frame ends. */
    uint32_t *path;
    size_t *end;
    size_t npath, path_cap;
    const char *prev;
    const char *unit; /* what the weights count: "samples", or a counter's unit */
};

static uint32_t svg_hash(uint32_t parent, const char *s, size_t len)
{
    /* FNV-1a over the name, then the parent folded in and mixed so that
     * equal names under different parents spread over the table. */
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    h ^= parent * 0x9e3779b1u;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    return h;
}

static int svg_grow_table(struct svg_tree *t)
{
    size_t ns = t->nslots ? t->nslots * 2 : 1024;
    uint32_t *s = malloc(ns * sizeof *s);
    if (s == NULL)
        return -1;
    memset(s, 0xff, ns * sizeof *s);
    for (uint32_t i = 1; i < t->count; i++) {
        size_t j = t->n[i].hash & (ns - 1);
        while (s[j] != WP_SVG_NONE)
            j = (j + 1) & (ns - 1);
        s[j] = i;
    }
    free(t->slot);
    t->slot = s;
    t->nslots = ns;
    return 0;
}

static enum svg_state svg_classify(const char *name, size_t len)
{
    int s = wp_state_parse(name, len);
    return s < 0 ? ST_OTHER : (enum svg_state)s;
}

static uint32_t svg_new_node(struct svg_tree *t, uint32_t parent, const char *name, size_t len, uint32_t hash)
{
    if (len > UINT32_MAX) {
        errno = EOVERFLOW;
        return WP_SVG_NONE;
    }
    if (t->count == t->cap) {
        if (t->cap >= UINT32_MAX / 4) {
            errno = ENOMEM;
            return WP_SVG_NONE;
        }
        uint32_t cap = t->cap ? t->cap * 2 : 1024;
        struct svg_node *n = realloc(t->n, (size_t)cap * sizeof *n);
        if (n == NULL)
            return WP_SVG_NONE;
        t->n = n;
        t->cap = cap;
    }
    struct svg_node *n = &t->n[t->count];
    memset(n, 0, sizeof *n);
    n->name = name;
    n->len = (uint32_t)len;
    n->hash = hash;
    n->parent = parent;
    n->drawn = WP_SVG_NONE;
    if (parent == WP_SVG_NONE) {
        n->state = ST_OTHER;
    } else {
        n->depth = t->n[parent].depth + 1;
        n->state = n->depth == 1 ? (uint8_t)svg_classify(name, len) : t->n[parent].state;
    }
    return t->count++;
}

/* The slot where (parent, name) is or would go. */
static size_t svg_slot(const struct svg_tree *t, uint32_t parent, const char *name, size_t len, uint32_t h)
{
    size_t j = h & (t->nslots - 1);
    for (;;) {
        uint32_t k = t->slot[j];
        if (k == WP_SVG_NONE)
            return j;
        const struct svg_node *n = &t->n[k];
        if (n->hash == h && n->parent == parent && n->len == len && memcmp(n->name, name, len) == 0)
            return j;
        j = (j + 1) & (t->nslots - 1);
    }
}

static uint32_t svg_find(const struct svg_tree *t, uint32_t parent, const char *name, size_t len)
{
    if (parent == WP_SVG_NONE || t->nslots == 0)
        return WP_SVG_NONE;
    return t->slot[svg_slot(t, parent, name, len, svg_hash(parent, name, len))];
}

/* The child of parent called name, created when missing. */
static uint32_t svg_child(struct svg_tree *t, uint32_t parent, const char *name, size_t len)
{
    if ((size_t)t->count * 2 >= t->nslots && svg_grow_table(t) != 0)
        return WP_SVG_NONE;
    uint32_t h = svg_hash(parent, name, len);
    size_t j = svg_slot(t, parent, name, len, h);
    if (t->slot[j] == WP_SVG_NONE)
        t->slot[j] = svg_new_node(t, parent, name, len, h);
    return t->slot[j];
}

/* Add one folded line.  Node 0 is "all". */
static int svg_add_line(struct svg_tree *t, const char *stack, uint64_t count)
{
    size_t len = strlen(stack);
    /* Frames shared with the previous line end at the same offset, inside
     * the common prefix, with a frame boundary there in both lines. */
    size_t common = 0, k = 0;
    if (t->prev)
        while (stack[common] && stack[common] == t->prev[common])
            common++;
    while (k < t->npath && t->end[k] <= common && (stack[t->end[k]] == ';' || stack[t->end[k]] == '\0'))
        k++;
    t->npath = k;
    t->prev = stack;
    t->n[0].total += count;
    for (size_t i = 0; i < k; i++)
        t->n[t->path[i]].total += count;
    uint32_t cur = k ? t->path[k - 1] : 0;
    size_t p = k ? t->end[k - 1] + 1 : 0;
    if (k && p > len)
        return 0;
    for (;;) {
        const char *semi = memchr(stack + p, ';', len - p);
        size_t e = semi ? (size_t)(semi - stack) : len;
        cur = svg_child(t, cur, stack + p, e - p);
        if (cur == WP_SVG_NONE)
            return -1;
        t->n[cur].total += count;
        if (t->npath == t->path_cap) {
            size_t cap = t->path_cap ? t->path_cap * 2 : 64;
            uint32_t *np = realloc(t->path, cap * sizeof *np);
            if (np == NULL)
                return -1;
            t->path = np;
            size_t *ne = realloc(t->end, cap * sizeof *ne);
            if (ne == NULL)
                return -1;
            t->end = ne;
            t->path_cap = cap;
        }
        t->path[t->npath] = cur;
        t->end[t->npath++] = e;
        if (semi == NULL)
            return 0;
        p = e + 1;
    }
}

/* Children of one parent are laid out next to each other in name order. */
static int svg_cmp_layout(const void *a, const void *b)
{
    const struct svg_drawn *x = a, *y = b;
    if (x->parent != y->parent)
        return x->parent < y->parent ? -1 : 1;
    size_t l = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->name, y->name, l);
    if (c != 0)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* --- text output ------------------------------------------------------------- */

/* Decode one UTF-8 sequence; returns its length in bytes (at least 1) and
 * sets *ok to 0 when the bytes are not a character XML 1.0 allows. */
static size_t svg_utf8(const unsigned char *s, size_t len, int *ok)
{
    unsigned c = s[0];
    size_t need;
    uint32_t cp, min;
    if (c < 0x80) {
        *ok = c >= 0x20 || c == '\t';
        return 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
        need = 1, cp = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        need = 2, cp = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 3, cp = c & 0x07, min = 0x10000;
    } else {
        *ok = 0;
        return 1;
    }
    if (len < need + 1) {
        *ok = 0;
        return 1;
    }
    for (size_t i = 1; i <= need; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            *ok = 0;
            return 1;
        }
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    *ok = cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) && cp != 0xfffe && cp != 0xffff;
    return *ok ? need + 1 : 1;
}

/* Number of characters svg_put() would write for a name. */
static size_t svg_chars(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; n++) {
        int ok;
        i += svg_utf8((const unsigned char *)s + i, len - i, &ok);
    }
    return n;
}

/* Write at most max characters of a name, escaped for XML; a byte that is
 * not part of valid UTF-8 becomes '?' so the document stays well-formed. */
static void svg_put(FILE *out, const char *s, size_t len, size_t max)
{
    size_t i = 0;
    for (size_t n = 0; i < len && n < max; n++) {
        int ok;
        size_t l = svg_utf8((const unsigned char *)s + i, len - i, &ok);
        if (!ok) {
            putc('?', out);
        } else if (l > 1) {
            fwrite(s + i, 1, l, out);
        } else {
            switch (s[i]) {
            case '&': fputs("&amp;", out); break;
            case '<': fputs("&lt;", out); break;
            case '>': fputs("&gt;", out); break;
            case '"': fputs("&quot;", out); break;
            case '\'': fputs("&apos;", out); break;
            default: putc(s[i], out);
            }
        }
        i += l;
    }
}

void wp_svg_put(FILE *out, const char *s)
{
    svg_put(out, s, strlen(s), SIZE_MAX);
}

void wp_svg_state_rgb(int state, int rgb[3])
{
    memcpy(rgb, svg_state_rgb[state >= 0 && state < WP_STATE_COUNT ? state : ST_OTHER], 3 * sizeof *rgb);
}

static double svg_pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* A colour in the hue of the frame's state, varied by a hash of the name
 * alone so that the same function looks the same in every run. */
static void svg_colour(const struct svg_node *n, int rgb[3])
{
    if (n->depth <= 1) {
        memcpy(rgb, svg_state_rgb[n->depth == 0 ? ST_OTHER : n->state], 3 * sizeof *rgb);
        return;
    }
    uint32_t h = svg_hash(0, n->name, n->len);
    int a = (int)(h & 0xff), b = (int)((h >> 8) & 0xff);
    switch (n->state) {
    case WP_STATE_NOT_IN_MPI:
        rgb[0] = 110 + a * 60 / 255, rgb[1] = 190 + b * 45 / 255, rgb[2] = 80 + a * 50 / 255;
        break;
    case WP_STATE_WORK:
        rgb[0] = 110 + a * 50 / 255, rgb[1] = 160 + b * 50 / 255, rgb[2] = 225 + a * 30 / 255;
        break;
    case WP_STATE_STALL:
        rgb[0] = 230 + b * 25 / 255, rgb[1] = 90 + a * 70 / 255, rgb[2] = 70 + a * 45 / 255;
        break;
    default:
        rgb[0] = rgb[1] = rgb[2] = 165 + a * 40 / 255;
    }
}

/* Samples of this frame's call path in the tower of state s. */
static uint64_t svg_tower_total(const struct svg_tree *t, const struct svg_drawn *d, int s)
{
    return d->twin[s] == WP_SVG_NONE ? 0 : t->n[d->twin[s]].total;
}

static void svg_frame(FILE *out, const struct svg_tree *t, const struct svg_drawn *d, int height, double scale)
{
    const struct svg_node *n = &t->n[d->node];
    uint64_t all = t->n[0].total;
    double x = SVG_MARGIN + (double)d->x * scale, w = (double)n->total * scale;
    int y = height - SVG_BOTTOM - (int)(n->depth + 1) * SVG_ROW;
    /* Under a state frame every sample is in that state, so the share is
     * all or nothing; the root's share is the whole run's. */
    uint64_t stall = n->depth == 0 ? svg_tower_total(t, d, WP_STATE_STALL) : n->state == WP_STATE_STALL ? n->total : 0;
    int rgb[3];
    svg_colour(n, rgb);

    fputs("<g class=\"f\"><title>", out);
    svg_put(out, n->name, n->len, SIZE_MAX);
    fprintf(out, " \xe2\x80\x94 %llu %s (%.1f%% of all), stall share %.1f%%", (unsigned long long)n->total,
            t->unit, svg_pct(n->total, all), svg_pct(stall, n->total));
    if (n->depth >= 2 && n->state != ST_OTHER) {
        uint64_t sum = 0;
        for (int s = 0; s < 3; s++)
            sum += svg_tower_total(t, d, s);
        fprintf(out, "\nall states at this call path: %llu %s (%.1f%% of all), stall share %.1f%%",
                (unsigned long long)sum, t->unit, svg_pct(sum, all), svg_pct(svg_tower_total(t, d, WP_STATE_STALL), sum));
    }
    fprintf(out, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" rx=\"2\" fill=\"rgb(%d,%d,%d)\"/>",
            x, y, w, SVG_ROW - 1, rgb[0], rgb[1], rgb[2]);
    /* The label is cut to what fits; the tooltip always has the full name. */
    double room = (w - 6) / svg_char_w;
    size_t fit = room > 0 ? (size_t)room : 0, chars = svg_chars(n->name, n->len);
    fprintf(out, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + SVG_ROW - 4);
    if (chars <= fit) {
        svg_put(out, n->name, n->len, SIZE_MAX);
    } else if (fit >= 3) {
        svg_put(out, n->name, n->len, fit - 2);
        fputs("..", out);
    }
    fputs("</text></g>\n", out);
}

/* Click a frame to make it fill the width; its ancestors stay below it,
 * everything else beside it is hidden.  Written to work on the numbers in
 * the document, so the picture without the script is the same one. */
static const char svg_script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "(function(){\n"
    "var W=1200,M=10,CW=6.7,E=0.02,fs=[].slice.call(document.querySelectorAll('g.f')),"
    "rs=document.getElementById('reset');\n"
    "fs.forEach(function(g){var r=g.querySelector('rect');"
    "g.o=[+r.getAttribute('x'),+r.getAttribute('width'),+r.getAttribute('y')];\n"
    " var t=g.querySelector('title').textContent.split('\\n')[0];g.n=t.slice(0,t.lastIndexOf(' \\u2014 '));\n"
    " g.onclick=function(){zoom(g);};});\n"
    "function place(g,x,w){var r=g.querySelector('rect'),t=g.querySelector('text'),n=Math.floor((w-6)/CW),s=g.n;\n"
    " r.setAttribute('x',x.toFixed(2));r.setAttribute('width',w.toFixed(2));\n"
    " if(s.length>n)s=n>=3?s.slice(0,n-2)+'..':'';t.textContent=s;t.setAttribute('x',(x+3).toFixed(2));"
    "g.style.display='';}\n"
    "function zoom(z){var x0=z.o[0],w0=z.o[1],k=(W-2*M)/w0;\n"
    " fs.forEach(function(g){var x=g.o[0],w=g.o[1];\n"
    "  if(g.o[2]>z.o[2]){if(x<=x0+E&&x+w>=x0+w0-E)place(g,M,W-2*M);else g.style.display='none';}\n"
    "  else if(x>=x0-E&&x+w<=x0+w0+E)place(g,M+(x-x0)*k,w*k);else g.style.display='none';});\n"
    " rs.style.display=w0<W-2*M-0.5?'':'none';}\n"
    "rs.onclick=function(){fs.forEach(function(g){place(g,g.o[0],g.o[1]);});rs.style.display='none';};\n"
    "})();\n"
    "]]></script>\n";

static void svg_document(FILE *out, const struct svg_tree *t, const struct svg_drawn *drawn, size_t ndrawn,
                         uint32_t max_depth, const char *title)
{
    int height = SVG_TOP + (int)(max_depth + 1) * SVG_ROW + SVG_BOTTOM;
    uint64_t all = t->n[0].total, per_state[ST_COUNT] = {0};
    for (int s = 0; s < 3; s++)
        per_state[s] = svg_tower_total(t, &drawn[0], s);
    per_state[ST_OTHER] = all - per_state[0] - per_state[1] - per_state[2];

    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"11\">\n"
            "<style>g.f{cursor:pointer}g.f:hover rect{stroke:#000;stroke-width:0.6}"
            "text{fill:#000}g.f text{pointer-events:none}</style>\n"
            "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fbfbf8\"/>\n"
            "<text x=\"%d\" y=\"24\" text-anchor=\"middle\" font-size=\"17\">",
            SVG_W, height, SVG_W, height, SVG_W, height, SVG_W / 2);
    svg_put(out, title, strlen(title), SIZE_MAX);
    fprintf(out,
            "</text>\n<text x=\"%d\" y=\"44\" text-anchor=\"middle\" font-size=\"12\">%llu %s in all; "
            "width is share of %s, root at the bottom; hover a frame for its numbers</text>\n",
            SVG_W / 2, (unsigned long long)all, t->unit, t->unit);
    /* Towers whose root is not a known state share one legend entry,
     * "other", shown only when there are any. */
    int lx = SVG_MARGIN;
    for (int st = 0; st < ST_COUNT; st++) {
        if (st == ST_OTHER && per_state[ST_OTHER] == 0)
            break;
        fprintf(out,
                "<g><rect x=\"%d\" y=\"56\" width=\"14\" height=\"14\" rx=\"2\" fill=\"rgb(%d,%d,%d)\"/>"
                "<text x=\"%d\" y=\"67\" font-size=\"12\">%s %.1f%% (%llu)</text></g>\n",
                lx, svg_state_rgb[st][0], svg_state_rgb[st][1], svg_state_rgb[st][2], lx + 20,
                svg_state_name(st), svg_pct(per_state[st], all), (unsigned long long)per_state[st]);
        lx += 270;
    }
    fprintf(out,
            "<text id=\"reset\" x=\"%d\" y=\"67\" text-anchor=\"end\" font-size=\"12\" style=\"display:none;"
            "cursor:pointer\">[reset zoom]</text>\n",
            SVG_W - SVG_MARGIN);
    if (all > 0) {
        double scale = (double)(SVG_W - 2 * SVG_MARGIN) / (double)all;
        for (size_t i = 0; i < ndrawn; i++)
            svg_frame(out, t, &drawn[i], height, scale);
    }
    fputs(svg_script, out);
    fputs("</svg>\n", out);
}

int wp_svg_write(FILE *out, const struct wp_folded *f, const char *title, const char *unit)
{
    struct svg_tree t = {0};
    t.unit = unit ? unit : "samples";
    struct svg_drawn *drawn = NULL;
    int rc = -1;
    if (svg_new_node(&t, WP_SVG_NONE, "all", 3, 0) == WP_SVG_NONE)
        goto done;
    for (size_t i = 0; i < f->n; i++)
        if (f->lines[i].count && svg_add_line(&t, f->lines[i].stack, f->lines[i].count) != 0)
            goto done;

    /* Frames under 0.1% would be under about a pixel wide: leaving them out
     * keeps the file small and the layout cheap.  A child is never wider
     * than its parent, so the drawn frames always form a connected tree. */
    uint64_t all = t.n[0].total, min = all / 1000 + (all % 1000 != 0);
    size_t ndrawn = 0;
    uint32_t max_depth = 0;
    for (uint32_t k = 0; k < t.count; k++)
        ndrawn += t.n[k].total >= min;
    drawn = calloc(ndrawn ? ndrawn : 1, sizeof *drawn);
    if (drawn == NULL)
        goto done;
    ndrawn = 0;
    for (uint32_t k = 0; k < t.count; k++) {
        const struct svg_node *n = &t.n[k];
        if (n->total >= min) {
            drawn[ndrawn++] = (struct svg_drawn){n->name, n->len, n->parent, k, {0, 0, 0}, 0};
            if (n->depth > max_depth)
                max_depth = n->depth;
        }
    }
    /* The root has no parent (WP_SVG_NONE, the largest index), so it sorts
     * last; put it first, then every parent comes before its children:
     * a parent is created before them, so its index is smaller. */
    qsort(drawn, ndrawn, sizeof *drawn, svg_cmp_layout);
    if (ndrawn > 1) {
        struct svg_drawn root = drawn[ndrawn - 1];
        memmove(drawn + 1, drawn, (ndrawn - 1) * sizeof *drawn);
        drawn[0] = root;
    }
    uint64_t acc = 0;
    for (size_t i = 0; i < ndrawn; i++) {
        struct svg_drawn *d = &drawn[i];
        struct svg_node *n = &t.n[d->node];
        n->drawn = (uint32_t)i;
        if (i == 0) {
            /* The state towers hang off the root. */
            for (int s = 0; s < 3; s++)
                d->twin[s] = svg_find(&t, 0, svg_state_name(s), strlen(svg_state_name(s)));
            continue;
        }
        /* The parent is drawn too: it has at least this frame's samples. */
        const struct svg_drawn *pd = &drawn[t.n[n->parent].drawn];
        if (drawn[i - 1].parent != d->parent)
            acc = pd->x;
        d->x = acc;
        acc += n->total;
        /* The same call path in each state tower: the same name under the
         * parent's counterpart.  A state frame's counterparts are the
         * other state frames. */
        for (int s = 0; s < 3; s++)
            d->twin[s] = n->depth == 1 ? drawn[0].twin[s] : svg_find(&t, pd->twin[s], n->name, n->len);
    }
    errno = 0;
    svg_document(out, &t, drawn, ndrawn, max_depth, title ? title : "waitprof");
    rc = fflush(out) == 0 && !ferror(out) ? 0 : -1;
    if (rc != 0 && errno == 0)
        errno = EIO;
done:
    free(drawn);
    free(t.path);
    free(t.end);
    free(t.slot);
    free(t.n);
    return rc;
}
