fn main() {
    println!("placement-study: skeleton");
}
