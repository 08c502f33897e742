! ws_waitall.F90: the Fortran form of ws_waitall.c (built with 'use mpi'
! and, with -DWP_F08, 'use mpi_f08'), for the Waitall remedy in the Fortran
! wrappers.  2 ranks.  Rank 0 completes NMSG receives from rank 1 with
! MPI_WAITALL at one call site, over three kinds of iterations:
!   early    rank 1 sends long before and rank 0 drives the messages to
!            completion with MPI_REQUEST_GET_STATUS while it computes, so
!            the requests are still pending but complete on entry (the case
!            the remedy is for);
!   on time  both meet at a barrier, then rank 1 sends at once;
!   late     after the barrier message m is sent (m+1)*DELAY late.
! Rank 1 writes its send-entry time (system_clock, CLOCK_MONOTONIC in
! gfortran, shared by the ranks of one machine) into each message; rank 0
! sums max(0, latest send entry - its Waitall entry).  Prints
! "truth rank=0 pattern=late_sender function=MPI_Waitall wait=S".
module wsw
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
end module

program ws_waitall_f
#ifdef WP_F08
  use mpi_f08
#else
  use mpi
#endif
  use wsw
  implicit none
  integer, parameter :: NMSG = 2, N = 32768  ! 256 KiB of doubles per message
  double precision, allocatable :: buf(:, :), out(:)
#ifdef WP_F08
  type(MPI_Request) :: reqs(NMSG)
  type(MPI_Status) :: st(NMSG), st1
#else
  integer :: reqs(NMSG)
  integer :: st(MPI_STATUS_SIZE, NMSG), st1(MPI_STATUS_SIZE)
#endif
  integer :: ierr, rank, size, r, kind, m, k, rounds, rc
  logical :: flag
  double precision :: delay, entry, latest, truth, t0, x, start, until
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
  allocate (buf(N, NMSG), out(N))
  buf = 0; out = 0; truth = 0; x = 0
  do r = 1, rounds
    do kind = 0, 2  ! 0 early, 1 on time, 2 late
      if (rank == 0) then
        do m = 1, NMSG
          call MPI_IRECV(buf(1, m), N, MPI_DOUBLE_PRECISION, 1, kind * NMSG + m, MPI_COMM_WORLD, reqs(m), ierr)
        end do
        if (kind == 0) then
          ! Compute and poll: the messages complete before the Waitall.
          t0 = now()
          do while (now() - t0 < 0.05d0)
            do k = 1, 1000
              x = x + k * 1d-9
            end do
            do k = 1, NMSG
              call MPI_REQUEST_GET_STATUS(reqs(k), flag, st1, ierr)
            end do
          end do
        end if
        call MPI_BARRIER(MPI_COMM_WORLD, ierr)
        entry = now()
        call MPI_WAITALL(NMSG, reqs, st, ierr)
        latest = 0
        do m = 1, NMSG
          latest = max(latest, buf(1, m))
        end do
        if (latest > entry) truth = truth + (latest - entry)
      else
        if (kind /= 0) call MPI_BARRIER(MPI_COMM_WORLD, ierr)
        start = now()
        do m = 1, NMSG
          if (kind == 2) then
            ! Sleep to a deadline: sampling signals cut usleep short.
            until = start + m * delay
            do while (now() < until)
              rc = usleep(1000_c_int)
            end do
          end if
          out(1) = now()
          call MPI_SEND(out, N, MPI_DOUBLE_PRECISION, 0, kind * NMSG + m, MPI_COMM_WORLD, ierr)
        end do
        if (kind == 0) call MPI_BARRIER(MPI_COMM_WORLD, ierr)
      end if
    end do
  end do
  if (rank == 0) write (*, '(a,f0.6)') 'truth rank=0 pattern=late_sender function=MPI_Waitall wait=', truth
  if (x < 0) print *, x
  call MPI_FINALIZE(ierr)
end program
