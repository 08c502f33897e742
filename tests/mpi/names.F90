! names.F90: Fortran frame names (symbols/names.h).  A module procedure
! calls MPI: rank 1 computes in halo's compute, then sends from halo's
! exchange; rank 0 receives in halo's exchange and waits (a late sender),
! ITER times (default 5), DELAY seconds each (default 0.2).  The main
! program is named names_prog, which gfortran keeps only in the DWARF (its
! function is MAIN__).  Prints "truth rank=R in_recv=S in_compute=S".
module halo
  use mpi
  implicit none
contains
  subroutine exchange(rank, buf)
    integer, intent(in) :: rank
    integer, intent(inout) :: buf
    integer :: ierr, status(MPI_STATUS_SIZE)
    if (rank == 0) then
      call MPI_RECV(buf, 1, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, status, ierr)
    else if (rank == 1) then
      call MPI_SEND(buf, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
    end if
  end subroutine
  subroutine compute(sec, x)
    double precision, intent(in) :: sec
    double precision, intent(inout) :: x
    double precision :: t0
    integer :: i
    t0 = MPI_WTIME()
    do while (MPI_WTIME() - t0 < sec)
      do i = 1, 1000
        x = x + i * 1d-9
      end do
    end do
  end subroutine
end module

program names_prog
  use mpi
  use halo
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
  buf = 0
  x = 0
  in_recv = 0
  in_compute = 0
  do it = 1, iter
    t0 = MPI_WTIME()
    if (rank == 1) then
      call compute(delay, x)
      in_compute = in_compute + MPI_WTIME() - t0
    end if
    call exchange(rank, buf)
    if (rank == 0) in_recv = in_recv + MPI_WTIME() - t0
  end do
  if (x < 0) print *, x
  write (*, '(a,i0,a,f0.6,a,f0.6)') 'truth rank=', rank, ' in_recv=', in_recv, ' in_compute=', in_compute
  call MPI_FINALIZE(ierr)
end program
