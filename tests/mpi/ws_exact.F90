! ws_exact.F90: matched instances through the Fortran wrappers (built with
! 'use mpi' and, with -DWP_F08, 'use mpi_f08'), the Fortran counterpart of
! ws_exact.c's iallreduce, persist and mprobe modes.  2 ranks, ROUNDS
! rounds (default 8), each begun with a barrier on a communicator of its
! own, so that MPI_COMM_WORLD's collective instances are only the measured
! ones, all among the first 16 that waitprof always records:
!   1. rank 1 sleeps DELAY (default 0.08 s), both call MPI_IALLREDUCE (the
!      maximum of their entry times: the latest entry) and MPI_WAIT;
!      truth, both ranks: max(0, latest entry - own MPI_WAIT entry);
!   2. rank 1 sleeps DELAY, then MPI_START on a persistent MPI_SEND_INIT
!      whose buffer holds its entry time; rank 0 MPI_STARTs its
!      MPI_RECV_INIT and waits: max(0, send entry - MPI_WAIT entry);
!   3. ('use mpi' only) rank 1 sleeps DELAY and sends its entry time; rank 0
!      takes the message with MPI_MPROBE (status ignored: waitprof passes
!      its own) and MPI_MRECV: max(0, send entry - MPI_MPROBE entry).
!      mpi_f08's status is not read, so its matched probes are not numbered.
!   4. rank 1 sleeps DELAY and sends its entry time; rank 0 posts MPI_IRECV
!      and completes it with MPI_WAITANY over it and MPI_REQUEST_NULL
!      (waitprof copies the Fortran handles and finds the completed one by
!      its Fortran handle afterwards): max(0, send entry - MPI_WAITANY entry).
!      With mpi_f08, MPI_WAITALL: MPICH 4.0's mpi_f08 MPI_WAITANY returns
!      the index less one, which names no request here.  WS_NULLS (default
!      1) null requests follow the receive: more than 63 make an array
!      longer than the 64 handles waitprof copies on its stack, and rank 0
!      prints "info rank=0 completion_handles=N".
! Times: system_clock, CLOCK_MONOTONIC in gfortran, shared by the ranks of
! one machine.  Rank 0 (and rank 0 and 1 for the NxN wait) prints
! "truth rank=R pattern=P function=F wait=S".
module wse
  use iso_c_binding
  implicit none
  interface
    integer(c_int) function usleep(us) bind(C, name='usleep')
      import :: c_int
      integer(c_int), value :: us
    end function
  end interface
contains
  double precision function now()
    integer(8) :: c, r
    call system_clock(c, r)
    now = dble(c) / dble(r)
  end function
  ! Sleep to a deadline: sampling signals cut usleep short.
  subroutine pause(sec)
    double precision, intent(in) :: sec
    double precision :: until
    integer :: rc
    until = now() + sec
    do while (now() < until)
      rc = usleep(1000_c_int)
    end do
  end subroutine
end module

program ws_exact_f
#ifdef WP_F08
  use mpi_f08
#else
  use mpi
#endif
  use wse
  implicit none
#ifdef WP_F08
  type(MPI_Request) :: req, preq
  type(MPI_Request), allocatable :: reqs(:)
  type(MPI_Comm) :: sync
  type(MPI_Message) :: msg
#else
  integer :: req, preq, sync, msg
  integer, allocatable :: reqs(:)
#endif
  integer :: ierr, rank, size, r, rounds, idx, nulls, ln, st
  double precision :: delay, entry, mine, latest, pbuf, x, y, tnxn, tpers, tprobe, tany
  character(len=32) :: arg
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  delay = 0.08d0
  rounds = 8
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) delay
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) rounds
  end if
  if (size /= 2) call MPI_ABORT(MPI_COMM_WORLD, 2, ierr)
  nulls = 1
  call get_environment_variable('WS_NULLS', arg, ln, st)
  if (st == 0 .and. ln > 0) read (arg, *) nulls
  allocate(reqs(nulls + 1))
  if (rank == 0 .and. nulls /= 1) write (*, '(a,i0)') 'info rank=0 completion_handles=', nulls + 1
  call MPI_COMM_DUP(MPI_COMM_WORLD, sync, ierr)
  if (rank == 1) then
    call MPI_SEND_INIT(pbuf, 1, MPI_DOUBLE_PRECISION, 0, 5, MPI_COMM_WORLD, preq, ierr)
  else
    call MPI_RECV_INIT(pbuf, 1, MPI_DOUBLE_PRECISION, 1, 5, MPI_COMM_WORLD, preq, ierr)
  end if
  tnxn = 0; tpers = 0; tprobe = 0; tany = 0
  do r = 1, rounds
    ! 1. MPI_IALLREDUCE + MPI_WAIT, rank 1 late.
    call MPI_BARRIER(sync, ierr)
    if (rank == 1) call pause(delay)
    mine = now()
    call MPI_IALLREDUCE(mine, latest, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, req, ierr)
    entry = now()
    call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
    tnxn = tnxn + max(0d0, latest - entry)
    ! 2. Persistent send and receive, rank 1 late.
    call MPI_BARRIER(sync, ierr)
    if (rank == 1) then
      call pause(delay)
      pbuf = now()
      call MPI_START(preq, ierr)
      call MPI_WAIT(preq, MPI_STATUS_IGNORE, ierr)
    else
      call MPI_START(preq, ierr)
      entry = now()
      call MPI_WAIT(preq, MPI_STATUS_IGNORE, ierr)
      tpers = tpers + max(0d0, pbuf - entry)
    end if
#ifndef WP_F08
    ! 3. MPI_MPROBE + MPI_MRECV, rank 1 late.
    call MPI_BARRIER(sync, ierr)
    if (rank == 1) then
      call pause(delay)
      x = now()
      call MPI_SEND(x, 1, MPI_DOUBLE_PRECISION, 0, 6, MPI_COMM_WORLD, ierr)
    else
      entry = now()
      call MPI_MPROBE(1, 6, MPI_COMM_WORLD, msg, MPI_STATUS_IGNORE, ierr)
      call MPI_MRECV(x, 1, MPI_DOUBLE_PRECISION, msg, MPI_STATUS_IGNORE, ierr)
      tprobe = tprobe + max(0d0, x - entry)
    end if
#endif
    ! 4. MPI_IRECV + MPI_WAITANY, rank 1 late.
    call MPI_BARRIER(sync, ierr)
    if (rank == 1) then
      call pause(delay)
      x = now()
      call MPI_SEND(x, 1, MPI_DOUBLE_PRECISION, 0, 8, MPI_COMM_WORLD, ierr)
    else
      call MPI_IRECV(y, 1, MPI_DOUBLE_PRECISION, 1, 8, MPI_COMM_WORLD, reqs(1), ierr)
      reqs(2:) = MPI_REQUEST_NULL
      entry = now()
#ifdef WP_F08
      call MPI_WAITALL(nulls + 1, reqs, MPI_STATUSES_IGNORE, ierr)
#else
      call MPI_WAITANY(nulls + 1, reqs, idx, MPI_STATUS_IGNORE, ierr)
#endif
      tany = tany + max(0d0, y - entry)
    end if
  end do
  call MPI_REQUEST_FREE(preq, ierr)
  call MPI_COMM_FREE(sync, ierr)
  ! Rank 1's NxN truth to rank 0, by a point-to-point message no truth
  ! line measures.
  if (rank == 1) then
    call MPI_SEND(tnxn, 1, MPI_DOUBLE_PRECISION, 0, 7, MPI_COMM_WORLD, ierr)
  else
    call MPI_RECV(x, 1, MPI_DOUBLE_PRECISION, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    write (*, '(a,f8.6)') 'truth rank=0 pattern=wait_nxn function=MPI_Wait wait=', tnxn
    write (*, '(a,f8.6)') 'truth rank=1 pattern=wait_nxn function=MPI_Wait wait=', x
    write (*, '(a,f8.6)') 'truth rank=0 pattern=late_sender function=MPI_Wait wait=', tpers
#ifdef WP_F08
    write (*, '(a,f8.6)') 'truth rank=0 pattern=late_sender function=MPI_Waitall wait=', tany
#else
    write (*, '(a,f8.6)') 'truth rank=0 pattern=late_sender function=MPI_Waitany wait=', tany
#endif
#ifndef WP_F08
    write (*, '(a,f8.6)') 'truth rank=0 pattern=late_sender function=MPI_Mprobe wait=', tprobe
#endif
  end if
  call MPI_FINALIZE(ierr)
end program
