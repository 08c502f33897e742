! inlined.F90: the late sender of names.F90, with its two pieces in
! internal procedures of the main program that gfortran inlines at -O2
! (built with -O2 -g): exchange, which calls MPI_RECV on rank 0 and
! MPI_SEND on rank 1, and compute, rank 1's computation.  Their frames
! exist only in the DWARF, which t_inlined.sh checks waitprof reads.
! Arguments DELAY seconds (default 0.2) and ITER (default 5), 2 ranks;
! prints "truth rank=R in_recv=S in_compute=S".
program inl_prog
  use mpi
  implicit none
  integer :: ierr, rank, it, buf, iter
  double precision :: delay, t0, in_recv, in_compute, x
  character(len=32) :: arg
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  delay = 0.2d0
  iter = 5
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) delay
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) iter
  end if
  in_recv = 0
  in_compute = 0
  x = 0
  buf = 0
  do it = 1, iter
    t0 = MPI_WTIME()
    if (rank == 1) then
      call compute(delay)
      in_compute = in_compute + (MPI_WTIME() - t0)
    end if
    t0 = MPI_WTIME()
    call exchange()
    if (rank == 0) in_recv = in_recv + (MPI_WTIME() - t0)
  end do
  write (*, '(A,I0,A,F0.6,A,F0.6,A,I0)') 'truth rank=', rank, ' in_recv=', in_recv, ' in_compute=', in_compute, &
    ' sink=', merge(1, 0, x > 1d30)
  call MPI_FINALIZE(ierr)
contains
  subroutine exchange()
    integer :: status(MPI_STATUS_SIZE)
    if (rank == 0) then
      call MPI_RECV(buf, 1, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, status, ierr)
    else if (rank == 1) then
      call MPI_SEND(buf, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
    end if
  end subroutine
  subroutine compute(sec)
    double precision, intent(in) :: sec
    double precision :: c0
    integer :: i
    c0 = MPI_WTIME()
    do while (MPI_WTIME() - c0 < sec)
      do i = 1, 1000
        x = x + i * 1d-9
      end do
    end do
  end subroutine
end program
