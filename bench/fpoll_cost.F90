! bench/fpoll_cost.F90 — what the wrappers add to MPI_TESTANY called from
! Fortran ('use mpi'), where the Fortran bindings' wrappers see the call.
!
! usage: fpoll_cost [calls [repeats [self|world [requests]]]]
!        (defaults 200000, 9, self, 64), one rank
!
! As poll_cost.c's testany loop: requests receives on a tag nobody sends,
! posted through MPI_IRECV (so under waitprof they are numbered on
! MPI_COMM_WORLD and the chosen ones followed) and, for the baseline,
! through PMPI_IRECV; each repeat times calls MPI_TESTANY over the first
! set and calls PMPI_TESTANY over the second, in an order that alternates
! between repeats.  One line:
!   fpoll_cost testany_ns=.. testany_pmpi_ns=.. testany_added_ns=..
!              calls=N repeats=R requests=Q
! with the medians over repeats of the MPI ns per call, the PMPI ns per
! call, and of MPI - PMPI within a repeat.  Open MPI only: MPICH's Fortran
! PMPI_ names are aliases of its MPI_ ones, which call the C MPI_
! functions, so there the baseline goes through waitprof's C wrappers.
module fpc
  implicit none
contains
  ! The median of v (the lower middle of an even count), which it sorts.
  double precision function median(v, n)
    integer, intent(in) :: n
    double precision, intent(inout) :: v(n)
    integer :: i, j
    double precision :: x
    do i = 2, n
      x = v(i)
      j = i - 1
      do while (j >= 1)
        if (v(j) <= x) exit
        v(j + 1) = v(j)
        j = j - 1
      end do
      v(j + 1) = x
    end do
    median = v((n + 1) / 2)
  end function
end module

program fpoll_cost
  use mpi
  use fpc
  implicit none
  integer, parameter :: tag = 4712, maxreq = 1024
  integer :: reqa(maxreq), reqb(maxreq), ierr, i, k, r, idx, calls, repeats, nreq, comm, pm
  logical :: flag
  double precision :: buf(maxreq, 2), t0, ns(2), a(1000), b(1000), d(1000)
  character(len=32) :: arg
  call MPI_INIT(ierr)
  calls = 200000
  repeats = 9
  comm = MPI_COMM_SELF
  nreq = 64
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) calls
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) repeats
  end if
  if (command_argument_count() >= 3) then
    call get_command_argument(3, arg)
    if (trim(arg) == 'world') comm = MPI_COMM_WORLD
  end if
  if (command_argument_count() >= 4) then
    call get_command_argument(4, arg)
    read (arg, *) nreq
  end if
  if (calls < 1 .or. repeats < 1 .or. repeats > 1000 .or. nreq < 1 .or. nreq > maxreq) then
    write (0, '(a)') 'usage: fpoll_cost [calls [repeats (1..1000) [self|world [requests (1..1024)]]]]'
    call MPI_ABORT(MPI_COMM_WORLD, 2, ierr)
  end if
  do i = 1, nreq
    call MPI_IRECV(buf(i, 1), 1, MPI_DOUBLE_PRECISION, 0, tag, comm, reqa(i), ierr)
    call PMPI_IRECV(buf(i, 2), 1, MPI_DOUBLE_PRECISION, 0, tag, comm, reqb(i), ierr)
  end do
  ! Warm-up: a tenth of a run each way.
  do i = 1, max(calls / 10, 1000)
    call MPI_TESTANY(nreq, reqa, idx, flag, MPI_STATUS_IGNORE, ierr)
    call PMPI_TESTANY(nreq, reqb, idx, flag, MPI_STATUS_IGNORE, ierr)
  end do
  do r = 1, repeats
    do k = 0, 1
      pm = mod(k + r, 2) + 1
      t0 = MPI_WTIME()
      if (pm == 1) then
        do i = 1, calls
          call MPI_TESTANY(nreq, reqa, idx, flag, MPI_STATUS_IGNORE, ierr)
        end do
      else
        do i = 1, calls
          call PMPI_TESTANY(nreq, reqb, idx, flag, MPI_STATUS_IGNORE, ierr)
        end do
      end if
      ns(pm) = (MPI_WTIME() - t0) * 1d9 / calls
    end do
    a(r) = ns(1)
    b(r) = ns(2)
    d(r) = ns(1) - ns(2)
  end do
  write (*, '(a,f0.2,a,f0.2,a,f0.2,a,i0,a,i0,a,i0)') 'fpoll_cost testany_ns=', median(a, repeats), &
    ' testany_pmpi_ns=', median(b, repeats), ' testany_added_ns=', median(d, repeats), &
    ' calls=', calls, ' repeats=', repeats, ' requests=', nreq
  do i = 1, nreq
    call MPI_CANCEL(reqa(i), ierr)
    call MPI_REQUEST_FREE(reqa(i), ierr)
    call PMPI_CANCEL(reqb(i), ierr)
    call PMPI_REQUEST_FREE(reqb(i), ierr)
  end do
  call MPI_FINALIZE(ierr)
end program
