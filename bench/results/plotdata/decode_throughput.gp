set terminal pngcairo size 900,560 font 'sans,11'
set output 'decode_throughput.png'
set title 'Decode throughput against batch size'
set xlabel 'batch size (concurrent requests)'
set ylabel 'tokens/s'
set grid
set key outside right top
set logscale x 2
set logscale y 10
plot 'plotdata/decode_throughput_0.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#1b9e77' title 'abc engine', \
     'plotdata/decode_throughput_1.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 2 lc rgb '#1b9e77' title 'abc PyTorch', \
     'plotdata/decode_throughput_2.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 3 lc rgb '#1b9e77' title 'abc gRPC', \
     'plotdata/decode_throughput_3.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#d95f02' title 'rfa engine', \
     'plotdata/decode_throughput_4.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 2 lc rgb '#d95f02' title 'rfa PyTorch', \
     'plotdata/decode_throughput_5.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 3 lc rgb '#d95f02' title 'rfa gRPC', \
     'plotdata/decode_throughput_6.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#7570b3' title 'luna engine', \
     'plotdata/decode_throughput_7.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 2 lc rgb '#7570b3' title 'luna PyTorch', \
     'plotdata/decode_throughput_8.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 3 lc rgb '#7570b3' title 'luna gRPC', \
     'plotdata/decode_throughput_9.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#e7298a' title 'softmax engine', \
     'plotdata/decode_throughput_10.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 2 lc rgb '#e7298a' title 'softmax PyTorch', \
     'plotdata/decode_throughput_11.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 3 lc rgb '#e7298a' title 'softmax gRPC'
