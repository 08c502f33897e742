/* tests/unit/test_requests.c — the stall sources' request table
 * (mpit/requests.h).
 *
 * Checked: a receive counts for its waiter only while it is both posted and
 * awaited, whatever the order in which "posted", "matched" and "awaited"
 * arrive; completion and unawaiting drop the count; a new owner takes the
 * count over from the old; a recycled id starts clean; a full table refuses
 * new ids and counts them; and under contention — threads that post, await
 * and match the same ids in every interleaving — every counter ends at zero,
 * which fails if one compare-and-swap lost or doubled a contribution.  The
 * single-thread cases run on both paths: with compare-and-swap, and serial
 * (wp_req_serial, plain stores) as below MPI_THREAD_MULTIPLE; and the
 * thread's own set of a blocking call's requests (serial only) counts the
 * same way, refuses when full, and forgets everything when the call ends.
 * With wp_req_need set (PERUSE, which sees Open MPI's progress passes), a
 * stall counts only after that many passes since it began, on both the
 * table and the thread's own set, and one that ended sooner dates no end.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>

#include "mpit/requests.h"
#include "tests/unit/unit.h"

static int stall(int k)
{
    return __atomic_load_n(&wp_req_stall[k], __ATOMIC_SEQ_CST);
}

START_TEST(receive_late_sender)
{
    wp_req_serial = _i; /* both paths: locked and serial */
    int me = wp_req_thread_index();
    ck_assert_int_ge(me, 0);
    uintptr_t id = 0x1000;
    wp_req_activate(id, 0, me); /* a blocking receive: awaited, not posted */
    ck_assert_int_eq(stall(me), 0);
    wp_req_posted(id); /* into the posted queue: waiting */
    ck_assert_int_eq(stall(me), 1);
    wp_req_posted(id); /* repeated: no double count */
    ck_assert_int_eq(stall(me), 1);
    wp_req_matched(id);
    ck_assert_int_eq(stall(me), 0);
    wp_req_matched(id);
    ck_assert_int_eq(stall(me), 0);
    wp_req_complete(id);
    ck_assert_int_eq(stall(me), 0);
}
END_TEST

START_TEST(await_after_posting)
{
    wp_req_serial = _i; /* both paths: locked and serial */
    int me = wp_req_thread_index();
    uintptr_t id = 0x2000;
    wp_req_activate(id, 0, -1); /* MPI_Irecv: nobody waits yet */
    wp_req_posted(id);
    ck_assert_int_eq(stall(me), 0);
    ck_assert_int_eq(wp_req_await(id, me), 1); /* MPI_Wait */
    ck_assert_int_eq(stall(me), 1);
    wp_req_unawait(id, me); /* the wait returned (e.g. Waitany) */
    ck_assert_int_eq(stall(me), 0);
    ck_assert_int_eq(wp_req_await(id, me), 1);
    ck_assert_int_eq(stall(me), 1);
    wp_req_complete(id);
    ck_assert_int_eq(stall(me), 0);
    ck_assert_int_eq(wp_req_await(0x2abc0, me), 0); /* unknown id: not seen */
}
END_TEST

START_TEST(owner_changes_and_recycling)
{
    wp_req_serial = _i; /* both paths: locked and serial */
    uintptr_t id = 0x3000;
    wp_req_activate(id, 1, 5); /* a send: posted from the start, thread 5 waits */
    ck_assert_int_eq(stall(5), 1);
    wp_req_await(id, 6); /* thread 6 waits on it now */
    ck_assert_int_eq(stall(5), 0);
    ck_assert_int_eq(stall(6), 1);
    wp_req_unawait(id, 5); /* not thread 5's any more: no effect */
    ck_assert_int_eq(stall(6), 1);
    wp_req_activate(id, 0, 7); /* recycled without completion: starts clean */
    ck_assert_int_eq(stall(6), 0);
    ck_assert_int_eq(stall(7), 0);
    wp_req_complete(id);
}
END_TEST

/* Serial mode: a blocking call's own requests in the thread's small set. */
START_TEST(mine_serial)
{
    /* The set's count is the thread's own (nposted), not the table's. */
    int me = wp_req_thread_index();
    wp_req_serial = 0;
    ck_assert_int_eq(wp_req_mine_activate(0x7000, 0), 0); /* only when serial */
    wp_req_serial = 1;
    uintptr_t recv = 0x7100, send = 0x7200;
    ck_assert_int_eq(wp_req_mine_activate(recv, 0), 1); /* MPI_Recv's request */
    ck_assert_int_eq(wp_mine.nposted, 0);
    ck_assert_int_eq(wp_req_mine_event(recv, 1), 1); /* posted */
    ck_assert_int_eq(wp_mine.nposted, 1);
    ck_assert_int_eq(wp_req_mine_event(recv, 1), 1); /* repeated: no double count */
    ck_assert_int_eq(wp_mine.nposted, 1);
    ck_assert_int_eq(wp_req_mine_event(recv, 0), 1); /* matched */
    ck_assert_int_eq(wp_mine.nposted, 0);
    ck_assert_int_eq(wp_req_mine_event(recv, -1), 1); /* completed: gone */
    ck_assert_int_eq(wp_req_mine_event(recv, 1), 0);
    ck_assert_int_eq(wp_mine.nposted, 0);
    ck_assert_int_eq(wp_req_mine_activate(send, 1), 1); /* a send: posted from the start */
    ck_assert_int_eq(wp_req_mine_activate(send, 1), 1); /* recycled: starts clean, one count */
    ck_assert_int_eq(wp_mine.nposted, 1);
    ck_assert_int_eq(wp_req_mine_event(0x7300, 0), 0); /* not the call's: the table's */
    wp_req_mine_clear(); /* the call returned */
    ck_assert_int_eq(wp_mine.nposted, 0);
    ck_assert_int_eq(wp_req_mine_event(send, -1), 0);
    /* A full set refuses; the caller falls back to the table. */
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(wp_req_mine_activate(0x7400 + (uintptr_t)i * 16, 1), 1);
    ck_assert_int_eq(wp_mine.nposted, 8);
    ck_assert_int_eq(wp_req_mine_activate(0x7500, 1), 0);
    wp_req_mine_clear();
    ck_assert_int_eq(wp_mine.nposted, 0);
    ck_assert_int_eq(stall(me), 0);
    wp_req_serial = 0;
}
END_TEST

/* A stall counts after wp_req_need progress passes since it began; a
 * shorter one (a message there but not yet read) dates no stall end. */
START_TEST(passes)
{
    int me = wp_req_thread_index();
    wp_req_serial = 1;
    wp_req_need = WP_REQ_PASSES;
    /* The thread's own set: a receive posted, matched within one pass. */
    wp_mine.stall_end = 0;
    ck_assert_int_eq(wp_req_mine_activate(0x9100, 0), 1);
    ck_assert_int_eq(wp_req_mine_event(0x9100, 1), 1);
    ck_assert_int_eq(wp_req_counts(wp_mine.since), 0);
    wp_req_progress();
    ck_assert_int_eq(wp_req_counts(wp_mine.since), 0);
    ck_assert_int_eq(wp_req_mine_event(0x9100, 0), 1);
    ck_assert(wp_mine.stall_end == 0);
    /* Posted again: a new stall, counted from now, which lasts. */
    ck_assert_int_eq(wp_req_mine_event(0x9100, 1), 1);
    ck_assert_int_eq(wp_req_counts(wp_mine.since), 0);
    wp_req_progress();
    wp_req_progress();
    ck_assert_int_eq(wp_req_counts(wp_mine.since), 1);
    ck_assert_int_eq(wp_req_mine_event(0x9100, 0), 1);
    ck_assert(wp_mine.stall_end != 0);
    wp_req_mine_clear();
    /* The table, both paths. */
    for (int serial = 0; serial < 2; serial++) {
        wp_req_serial = serial;
        uintptr_t id = 0x9200 + (uintptr_t)serial * 16;
        __atomic_store_n(&wp_req_stall_end[me], 0, __ATOMIC_SEQ_CST);
        wp_req_activate(id, 1, me); /* a send waiting for its receiver */
        ck_assert_int_eq(stall(me), 1);
        ck_assert_int_eq(wp_req_counts(wp_req_since[me]), 0);
        wp_req_matched(id); /* answered within the pass */
        ck_assert_int_eq(stall(me), 0);
        ck_assert(wp_req_stall_end[me] == 0);
        wp_req_posted(id);
        wp_req_progress();
        wp_req_progress();
        ck_assert_int_eq(wp_req_counts(wp_req_since[me]), 1);
        wp_req_matched(id);
        ck_assert(wp_req_stall_end[me] != 0);
        wp_req_complete(id);
    }
    /* Without passes (MPI_T, or no progress hook) a stall counts at once. */
    wp_req_need = 0;
    ck_assert_int_eq(wp_req_counts(wp_req_pass), 1);
    wp_req_serial = 0;
}
END_TEST

/* Serial mode: with no live request in the table, nothing is looked up. */
START_TEST(live_serial)
{
    int me = wp_req_thread_index();
    wp_req_serial = 1;
    uintptr_t id = 0x7800;
    ck_assert_int_eq(wp_req_await(id, me), 0); /* nothing live: not seen */
    wp_req_activate(id, 0, -1);               /* MPI_Irecv */
    wp_req_posted(id);
    ck_assert_int_eq(stall(me), 0);
    ck_assert_int_eq(wp_req_await(id, me), 1); /* MPI_Wait on it */
    ck_assert_int_eq(stall(me), 1);
    wp_req_activate(id, 1, me); /* recycled while live: still one live request */
    wp_req_matched(id);
    wp_req_complete(id);
    ck_assert_int_eq(stall(me), 0);
    ck_assert_int_eq(wp_req_await(id, me), 0); /* complete, none live: not seen */
    wp_req_posted(id);                         /* a stray event changes nothing */
    ck_assert_int_eq(stall(me), 0);
    wp_req_activate(id, 0, -1); /* live again: found again */
    ck_assert_int_eq(wp_req_await(id, me), 1);
    wp_req_complete(id);
    ck_assert_int_eq(stall(me), 0);
    wp_req_serial = 0;
}
END_TEST

START_TEST(full_table)
{
    unsigned long before = wp_req_untracked;
    int refused = 0;
    /* Ids spread over all slots; more ids than slots must be refused. */
    for (uintptr_t i = 1; i <= WP_REQ_SLOTS + 100; i++) {
        uintptr_t id = 0x100000 + i * 16;
        unsigned long u = wp_req_untracked;
        wp_req_activate(id, 1, 3);
        if (wp_req_untracked != u)
            refused++;
        wp_req_complete(id);
    }
    ck_assert_int_ge(refused, 100);
    ck_assert_uint_eq(wp_req_untracked - before, (unsigned long)refused);
    ck_assert_int_eq(stall(3), 0);
}
END_TEST

/* Contention: thread k awaits ids, the others post and match them, in
 * random interleavings; all counters must return to zero. */
#define ROUNDS 200000
#define IDS 8

static void *hammer(void *arg)
{
    int k = (int)(intptr_t)arg;
    unsigned x = 12345u + (unsigned)k * 7919u;
    for (int i = 0; i < ROUNDS; i++) {
        x = x * 1103515245u + 12345u;
        uintptr_t id = 0x900000 + ((x >> 16) % IDS) * 64;
        switch ((x >> 8) % 4) {
        case 0: wp_req_posted(id); break;
        case 1: wp_req_matched(id); break;
        case 2: wp_req_await(id, k); break;
        default: wp_req_unawait(id, k); break;
        }
    }
    return NULL;
}

START_TEST(contention)
{
    wp_req_serial = 0; /* threads at once: the locked path */
    unsigned long u = wp_req_untracked;
    for (int i = 0; i < IDS; i++)
        wp_req_activate(0x900000 + (uintptr_t)i * 64, 0, -1);
    ck_assert_uint_eq(wp_req_untracked, u); /* all followed, or this proves nothing */
    pthread_t th[4];
    for (int k = 0; k < 4; k++)
        pthread_create(&th[k], NULL, hammer, (void *)(intptr_t)(10 + k));
    for (int k = 0; k < 4; k++)
        pthread_join(th[k], NULL);
    /* Whatever state the ids are in, the counters must equal the number of
     * ids that are posted and awaited by each thread; completing all of
     * them must bring every counter to exactly zero. */
    for (int i = 0; i < IDS; i++)
        wp_req_complete(0x900000 + (uintptr_t)i * 64);
    for (int k = 10; k < 14; k++)
        ck_assert_int_eq(stall(k), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("requests");
    TCase *tc = tcase_create("table");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, receive_late_sender, 0, 2);
    tcase_add_loop_test(tc, await_after_posting, 0, 2);
    tcase_add_loop_test(tc, owner_changes_and_recycling, 0, 2);
    tcase_add_test(tc, mine_serial);
    tcase_add_test(tc, live_serial);
    tcase_add_test(tc, passes);
    /* Last: it fills the table, which never frees a slot. */
    tcase_add_test(tc, contention);
    tcase_add_test(tc, full_table);
    suite_add_tcase(s, tc);
    return wp_unit_run(s, 0);
}
